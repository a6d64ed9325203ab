//! `rnt sql`: SQL against the store (`docs/sql.md`).
//!
//! ```text
//! rnt sql 'SELECT …' [--at REF] [--format table|csv|json]   a query (or any statements)
//! rnt sql -f script.sql [-m MSG]                             statements in order
//! rnt sql --rules 'CREATE MATERIALIZED VIEW …'               the rules it compiles to
//! rnt sql                                                    a prompt: statements end with
//!                                                            `;`, `\q` quits
//! ```
//! Each DDL or DML statement is a commit; `BEGIN … COMMIT` makes one commit of many.

use crate::cmd::show::write_tuples;
use crate::output::Format;
use crate::Context;
use anyhow::Context as _;
use clap::Args;
use rnt_db::Database;
use rnt_sql_run::{Outcome, Session, SqlError};
use std::fmt;
use std::io::{BufRead, IsTerminal, Write};

/// Arguments of `rnt sql`.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The statements (`;`-separated); without them and without -f, a prompt on stdin.
    #[arg(value_name = "SQL")]
    sql: Option<String>,
    /// Read the statements from FILE.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE",
        conflicts_with = "sql"
    )]
    file: Option<std::path::PathBuf>,
    /// The message of each commit (default: the statement's text).
    #[arg(short = 'm', long = "message", value_name = "MSG")]
    message: Option<String>,
    /// Read the state REF names (queries only).
    #[arg(long, value_name = "REF")]
    at: Option<String>,
    /// Output format of query answers.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print the rules the statements compile to; change nothing.
    #[arg(long)]
    rules: bool,
    /// When a constraint (a denial) refuses a statement, list up to N witnesses of each
    /// violated one (a `(and more: --witnesses N)` says when there are more).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::cmd::at_least_one)]
    witnesses: usize,
}

impl SqlArgs {
    /// Whether this is the prompt (no statements given, none in a file).
    pub fn is_prompt(&self) -> bool {
        self.sql.is_none() && self.file.is_none()
    }

    /// The file the statements are read from, if any.
    pub fn input_file(&self) -> Option<&std::path::Path> {
        self.file.as_deref()
    }
}

/// An SQL error, rendered with its caret, and its exit code.
#[derive(Debug)]
pub struct SqlFailure {
    /// The message, with the statement line and caret where known.
    pub rendered: String,
    /// The exit code.
    pub code: u8,
}

impl fmt::Display for SqlFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rendered)
    }
}

impl std::error::Error for SqlFailure {}

fn failure(error: &SqlError, text: &str) -> anyhow::Error {
    SqlFailure {
        rendered: error.render(text),
        code: u8::try_from(error.exit_code()).unwrap_or(1),
    }
    .into()
}

/// Runs `rnt sql`.
pub fn run(context: &Context, args: SqlArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let db = context.open()?.with_witnesses(args.witnesses);
    let text = match (&args.sql, &args.file) {
        (Some(sql), _) => sql.clone(),
        (None, Some(file)) => context
            .read_input_text(file)
            .with_context(|| format!("cannot read {}", file.display()))?,
        (None, None) => return prompt(&db, &args, out),
    };
    let mut session = Session::new(&db)
        .with_message(args.message.clone())
        .at(args.at.clone());
    if args.rules {
        let rules = session.rules(&text).map_err(|e| failure(&e, &text))?;
        write!(out, "{rules}")?;
        return Ok(());
    }
    let result = session.run(&text);
    let (outcomes, error) = match result {
        Ok(outcomes) => (outcomes, None),
        Err((outcomes, error)) => (outcomes, Some(error)),
    };
    for outcome in &outcomes {
        write_outcome(out, outcome, args.format)?;
    }
    if session.in_transaction() && error.is_none() {
        let unfinished = SqlError::bind(
            "the transaction was not committed (COMMIT ends it); nothing was written",
        );
        return Err(failure(&unfinished, &text));
    }
    match error {
        Some(error) => Err(failure(&error, &text)),
        None => Ok(()),
    }
}

/// Prints what one statement did.
fn write_outcome(out: &mut dyn Write, outcome: &Outcome, format: Format) -> anyhow::Result<()> {
    match outcome {
        Outcome::Rows { schema, rows } => write_tuples(out, schema, rows, format)?,
        Outcome::Committed {
            commit,
            state,
            what,
            ..
        } => {
            writeln!(
                out,
                "{}",
                crate::output::committed_line(commit, state, &[], Some(what))
            )?;
        }
        Outcome::NothingToCommit | Outcome::Changed { pending: false, .. } => {
            writeln!(out, "nothing to commit")?
        }
        Outcome::Note(note)
        | Outcome::Changed {
            what: note,
            pending: true,
            ..
        } => writeln!(out, "{note}")?,
    }
    Ok(())
}

/// Where the prompt's lines come from: a line editor with history on a terminal, standard
/// input otherwise (a script piped in).
enum Lines {
    Editor(Box<rustyline::DefaultEditor>),
    Stdin,
}

/// The prompt's history file: `RNT_SQL_HISTORY`, else `~/.rnt_sql_history`.
fn history_path() -> Option<std::path::PathBuf> {
    if let Some(path) = std::env::var_os("RNT_SQL_HISTORY") {
        return Some(path.into());
    }
    std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".rnt_sql_history"))
}

impl Lines {
    /// The editor on a terminal (its history loaded), else standard input.
    fn open(interactive: bool) -> Lines {
        if !interactive {
            return Lines::Stdin;
        }
        match rustyline::DefaultEditor::new() {
            Ok(mut editor) => {
                if let Some(path) = history_path() {
                    // A first session has no history yet.
                    let _ = editor.load_history(&path);
                }
                Lines::Editor(Box::new(editor))
            }
            Err(_) => Lines::Stdin,
        }
    }

    /// The next line (with its newline), `Some("")` when the user pressed Ctrl-C (the
    /// pending statement is dropped), `None` at the end of input.
    fn next(&mut self, prompt: &str) -> anyhow::Result<Option<String>> {
        match self {
            Lines::Stdin => {
                let mut line = String::new();
                match std::io::stdin().lock().read_line(&mut line)? {
                    0 => Ok(None),
                    _ => Ok(Some(line)),
                }
            }
            Lines::Editor(editor) => match editor.readline(prompt) {
                Ok(line) => Ok(Some(format!("{line}\n"))),
                Err(rustyline::error::ReadlineError::Interrupted) => Ok(Some(String::new())),
                Err(rustyline::error::ReadlineError::Eof) => Ok(None),
                Err(e) => Err(e.into()),
            },
        }
    }

    /// Remembers a complete statement (the editor's history, saved as it grows).
    fn remember(&mut self, statement: &str) {
        if let Lines::Editor(editor) = self {
            let _ = editor.add_history_entry(statement.trim());
            if let Some(path) = history_path() {
                let _ = editor.save_history(&path);
            }
        }
    }
}

/// The prompt: lines gathered until a statement ends with `;`, each run as it completes;
/// `\q` (or the end of input) quits. Errors are printed and the prompt goes on. On a
/// terminal lines are edited, and statements kept in a history (`~/.rnt_sql_history`, or
/// `RNT_SQL_HISTORY`) that the arrow keys recall; Ctrl-C drops the pending statement.
fn prompt(db: &Database, args: &SqlArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let interactive = std::io::stdin().is_terminal();
    let mut lines = Lines::open(interactive);
    let mut session = Session::new(db)
        .with_message(args.message.clone())
        .at(args.at.clone());
    let mut pending = String::new();
    let mut failed = false;
    loop {
        let prompt = if pending.is_empty() { "rnt> " } else { "...> " };
        if interactive && matches!(lines, Lines::Stdin) {
            eprint!("{prompt}");
        }
        let Some(line) = lines.next(prompt)? else {
            break;
        };
        if line.is_empty() {
            pending.clear();
            continue;
        }
        if pending.is_empty() && line.trim() == "\\q" {
            break;
        }
        pending.push_str(&line);
        if !pending.trim_end().ends_with(';') {
            continue;
        }
        let text = std::mem::take(&mut pending);
        lines.remember(&text);
        match session.run(&text) {
            Ok(outcomes) => {
                for outcome in &outcomes {
                    write_outcome(out, outcome, args.format)?;
                }
            }
            Err((outcomes, error)) => {
                for outcome in &outcomes {
                    write_outcome(out, outcome, args.format)?;
                }
                eprintln!("error: {}", crate::output::clip_words(&error.render(&text)));
                failed = true;
            }
        }
        out.flush()?;
    }
    if !pending.trim().is_empty() {
        eprintln!("error: the input ended inside a statement (a `;` ends one); it was not run");
        failed = true;
    }
    match failed && !interactive {
        true => Err(SqlFailure {
            rendered: "a statement failed (see above)".into(),
            code: 1,
        }
        .into()),
        false => Ok(()),
    }
}
