//! The SQL front end's one error type: where in the statement (line and column, for the
//! caret), what went wrong, and the exit code it stands for (`docs/design.md`: 1 for a user
//! error, 2 for a refused commit — a violated constraint or denial).

use std::fmt;

/// What kind of failure, which decides the exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlErrorKind {
    /// The text does not parse.
    Parse,
    /// A name or a type does not bind (a type mismatch, a misplaced clause); the names
    /// that are missing have kinds of their own.
    Bind,
    /// A name that names no table or view.
    UnknownRelation,
    /// A column name that no table in scope has.
    UnknownColumn,
    /// A relation of the name exists already.
    DuplicateRelation,
    /// A construct rnt does not support: "not supported: …".
    Unsupported,
    /// A constraint refused the statement: exit 2, naming it.
    Constraint(ConstraintKind),
    /// Arithmetic with no answer in its type: a division by zero.
    DivisionByZero,
    /// Arithmetic out of its type's range.
    Overflow,
    /// Another writer moved the head while the statement's commit was prepared.
    Conflict,
    /// BEGIN while a transaction is open.
    ActiveTransaction,
    /// COMMIT or ROLLBACK without an open transaction.
    NoActiveTransaction,
    /// A write where only reads may run (`--at`, `SET rnt.at`).
    ReadOnly,
    /// The database refused or failed; its own exit code.
    Db(i32),
}

/// Which constraint refused a statement (PostgreSQL's SQLSTATE tells them apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintKind {
    /// PRIMARY KEY.
    PrimaryKey,
    /// UNIQUE.
    Unique,
    /// NOT NULL.
    NotNull,
    /// FOREIGN KEY … REFERENCES.
    ForeignKey,
    /// CHECK.
    Check,
    /// A denial that is no SQL constraint (CREATE ASSERTION, a rule-language denial).
    Denial,
}

impl ConstraintKind {
    /// The kind of the constraint behind denial `name`, by the names CREATE TABLE gives
    /// its constraints' denials (PostgreSQL's: `t_c_key`, `t_c_fkey`, `t_check`,
    /// `t_c_check`, `t_checkN`); [`ConstraintKind::Denial`] for any other.
    pub fn of_denial(name: &str) -> ConstraintKind {
        let numbered_check = name
            .rsplit_once("_check")
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if name.ends_with("_fkey") {
            ConstraintKind::ForeignKey
        } else if name.ends_with("_key") {
            ConstraintKind::Unique
        } else if name.ends_with("_check") || numbered_check {
            ConstraintKind::Check
        } else {
            ConstraintKind::Denial
        }
    }
}

/// An error with the place it points at (1-based line and column), when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    /// The kind.
    pub kind: SqlErrorKind,
    /// The message, one line.
    pub message: String,
    /// Where, as (line, column), 1-based.
    pub at: Option<(u64, u64)>,
}

/// The front end's results.
pub type SqlResult<T> = Result<T, SqlError>;

impl SqlError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: SqlErrorKind, message: impl Into<String>) -> SqlError {
        SqlError {
            kind,
            message: message.into(),
            at: None,
        }
    }

    /// A name or type that does not bind.
    pub fn bind(message: impl Into<String>) -> SqlError {
        SqlError::new(SqlErrorKind::Bind, message)
    }

    /// A construct rnt does not support; the message names it after "not supported: ".
    pub fn unsupported(what: impl fmt::Display) -> SqlError {
        SqlError::new(SqlErrorKind::Unsupported, format!("not supported: {what}"))
    }

    /// A statement the front end compiled to rules the rule language refuses
    /// (`diagnostics`, rendered): a limit of the front end, refused as not supported with
    /// the diagnostics' first message only (never the rules: users wrote SQL).
    pub fn uncompiled(diagnostics: &str) -> SqlError {
        let first = diagnostics.lines().next().unwrap_or("").trim();
        let first = first.strip_prefix("error: ").unwrap_or(first);
        SqlError::unsupported(format!(
            "this statement: rnt's SQL front end cannot compile it yet ({})",
            rnt_lang::diagnostic::clip(first)
        ))
    }

    /// A violated constraint of `kind`, named in `message`.
    pub fn constraint(kind: ConstraintKind, message: impl Into<String>) -> SqlError {
        SqlError::new(SqlErrorKind::Constraint(kind), message)
    }

    /// A name that names no table or view.
    pub fn unknown_relation(message: impl Into<String>) -> SqlError {
        SqlError::new(SqlErrorKind::UnknownRelation, message)
    }

    /// A column name no table in scope has.
    pub fn unknown_column(message: impl Into<String>) -> SqlError {
        SqlError::new(SqlErrorKind::UnknownColumn, message)
    }

    /// The error pointing at `at` (1-based line and column; 0 means unknown), unless it
    /// already points somewhere.
    pub fn at(mut self, line: u64, column: u64) -> SqlError {
        if self.at.is_none() && line > 0 {
            self.at = Some((line, column.max(1)));
        }
        self
    }

    /// The process exit code the error stands for.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            SqlErrorKind::Constraint(_) => 2,
            SqlErrorKind::Db(code) => code,
            _ => 1,
        }
    }

    /// The message with the statement's line under it and a caret at the column, as
    /// program errors are shown; `text` is the SQL the position points into.
    pub fn render(&self, text: &str) -> String {
        let Some((line, column)) = self.at else {
            return self.message.clone();
        };
        let Some(source) = text
            .lines()
            .nth(usize::try_from(line - 1).unwrap_or(usize::MAX))
        else {
            return self.message.clone();
        };
        // At most ~80 characters of the line around the column.
        let chars: Vec<char> = source.chars().collect();
        let at = usize::try_from(column - 1).unwrap_or(0).min(chars.len());
        let start = at.saturating_sub(40);
        let end = (at + 40).min(chars.len());
        let shown: String = chars[start..end].iter().collect();
        let prefix = if start > 0 { "…" } else { "" };
        let suffix = if end < chars.len() { "…" } else { "" };
        let caret = " ".repeat(at - start + prefix.chars().count());
        format!(
            "{}\n --> line {line}, column {column}\n  | {prefix}{shown}{suffix}\n  | {caret}^",
            self.message
        )
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((line, column)) => write!(f, "{} (line {line}, column {column})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SqlError {}

/// `expr` as text of at most ~60 characters, for messages.
pub fn clip(expr: &impl std::fmt::Display) -> String {
    let text = expr.to_string();
    match text.chars().count() > 60 {
        true => format!("{}…", text.chars().take(60).collect::<String>()),
        false => text,
    }
}
