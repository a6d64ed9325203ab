//! A script parsed into statements: sqlparser's (PostgreSQL's dialect, DuckDB's where it
//! differs, the generic one for `REPLACE INTO`), rnt's `CREATE ASSERTION`, each with its
//! `AS OF`s and where in the script it starts (for carets).

use rnt_sql::as_of::AsOf;
use rnt_sql::error::{SqlError, SqlErrorKind};
use rnt_sql::names;
use rnt_sql::SqlResult;
use sqlparser::ast::Statement;
use sqlparser::dialect::{DuckDbDialect, GenericDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

/// A statement: sqlparser's, or rnt's `CREATE ASSERTION name CHECK (NOT EXISTS (query))`.
pub enum Stmt {
    /// A statement sqlparser reads.
    Sql(Box<Statement>),
    /// `CREATE ASSERTION`: a denial named `name` holding the query's rows.
    Assertion {
        /// The assertion's name.
        name: String,
        /// The query whose rows violate it.
        query: Box<sqlparser::ast::Query>,
    },
}

/// A parsed statement and the script line its text starts on.
pub struct Parsed {
    /// The statement.
    pub stmt: Stmt,
    /// Its `AS OF 'REF'`s (blanked out of the text sqlparser read).
    pub as_of: Vec<AsOf>,
    /// The line and column of the script its text starts at.
    pub start: (u64, u64),
}

/// Parses a script (PostgreSQL's dialect, DuckDB's where it differs, as for `//`),
/// statement by statement.
pub fn parse(text: &str) -> SqlResult<Vec<Parsed>> {
    let mut out = Vec::new();
    for piece in rnt_sql::split::statements(text) {
        let shift = |e: SqlError| match e.at {
            Some((line, column)) => SqlError {
                at: Some(piece.in_script(line, column)),
                ..e
            },
            None => e.at(piece.line, piece.column),
        };
        if let Some(assertion) = assertion(&piece.text).map_err(shift)? {
            out.push(Parsed {
                stmt: assertion,
                as_of: Vec::new(),
                start: (piece.line, piece.column),
            });
            continue;
        }
        let (text, as_of) = rnt_sql::as_of::strip(&piece.text);
        let statements = match Parser::parse_sql(&PostgreSqlDialect {}, &text) {
            Ok(statements) => statements,
            Err(error) => match Parser::parse_sql(&DuckDbDialect {}, &text) {
                Ok(statements) => statements,
                // SQLite's and MySQL's `REPLACE INTO t …` (INSERT OR REPLACE), which only
                // sqlparser's generic dialect reads among the ones above.
                Err(_) if starts_with_replace(&text) => {
                    Parser::parse_sql(&GenericDialect {}, &text)
                        .map_err(|_| shift(parse_error(&error.to_string())))?
                }
                Err(_) => return Err(shift(parse_error(&error.to_string()))),
            },
        };
        if statements.len() > 1 && !as_of.is_empty() {
            return Err(shift(SqlError::unsupported(
                "AS OF in a statement written without a `;` after the one before",
            )));
        }
        out.extend(statements.into_iter().map(|stmt| Parsed {
            stmt: Stmt::Sql(Box::new(stmt)),
            as_of: as_of.clone(),
            start: (piece.line, piece.column),
        }));
    }
    Ok(out)
}

/// Whether the statement's first word is REPLACE.
fn starts_with_replace(text: &str) -> bool {
    text.split_whitespace()
        .next()
        .is_some_and(|word| word.eq_ignore_ascii_case("replace"))
}

/// `CREATE ASSERTION name CHECK (NOT EXISTS (query))`, if the text is one.
fn assertion(text: &str) -> SqlResult<Option<Stmt>> {
    // Past leading blank lines and `--` comments.
    let mut text = text.trim_start();
    while text.starts_with("--") {
        text = text
            .split_once('\n')
            .map_or("", |(_, rest)| rest)
            .trim_start();
    }
    let words: Vec<&str> = text.split_whitespace().take(4).collect();
    let [create, word, name, check] = words.as_slice() else {
        return Ok(None);
    };
    if !create.eq_ignore_ascii_case("create") || !word.eq_ignore_ascii_case("assertion") {
        return Ok(None);
    }
    let check_word = check.get(..5).unwrap_or(check);
    if !check_word.eq_ignore_ascii_case("check") {
        return Err(SqlError::new(
            SqlErrorKind::Parse,
            "syntax error: CREATE ASSERTION name CHECK (NOT EXISTS (SELECT …))",
        ));
    }
    let name = names::new_name(&sqlparser::ast::Ident::new(name.to_string()))?;
    let at = text.to_lowercase().find("check").unwrap_or(0) + "check".len();
    let condition = format!("SELECT 1 WHERE {}", &text[at..]);
    let parsed = Parser::parse_sql(&PostgreSqlDialect {}, &condition)
        .map_err(|e| parse_error(&e.to_string()))?;
    let query = match parsed.as_slice() {
        [Statement::Query(q)] => match &*q.body {
            sqlparser::ast::SetExpr::Select(select) => {
                match select.selection.as_ref().map(strip_nested) {
                    Some(sqlparser::ast::Expr::Exists {
                        subquery,
                        negated: true,
                    }) => subquery.clone(),
                    _ => {
                        return Err(SqlError::unsupported(
                            "an ASSERTION other than CHECK (NOT EXISTS (SELECT …))",
                        ))
                    }
                }
            }
            _ => return Err(SqlError::unsupported("this ASSERTION")),
        },
        _ => return Err(SqlError::unsupported("this ASSERTION")),
    };
    Ok(Some(Stmt::Assertion { name, query }))
}

fn strip_nested(expr: &sqlparser::ast::Expr) -> &sqlparser::ast::Expr {
    match expr {
        sqlparser::ast::Expr::Nested(inner) => strip_nested(inner),
        other => other,
    }
}

/// A parser error with the line and column it names (sqlparser writes "at Line: L,
/// Column: C").
fn parse_error(message: &str) -> SqlError {
    let position = message.rfind(" at Line: ").and_then(|at| {
        let rest = &message[at + " at Line: ".len()..];
        let (line, column) = rest.split_once(", Column: ")?;
        Some((at, line.trim().parse().ok()?, column.trim().parse().ok()?))
    });
    let clean = message.trim_start_matches("sql parser error: ");
    match position {
        Some((at, line, column)) => {
            let text = &message[..at];
            SqlError::new(
                SqlErrorKind::Parse,
                format!(
                    "syntax error: {}",
                    text.trim_start_matches("sql parser error: ")
                ),
            )
            .at(line, column)
        }
        None => SqlError::new(SqlErrorKind::Parse, format!("syntax error: {clean}")),
    }
}
