//! `COPY … TO STDOUT` and `COPY … FROM STDIN` (psql's `\copy`): what a COPY statement asks
//! for, as a [`CopyPlan`]; the rows of a COPY FROM as one INSERT (so they are one commit,
//! judged by the constraints as any INSERT). The data's bytes travel in the Postgres
//! protocol's copy messages, read and written by the server (`cli/src/serve/pg/copy.rs`);
//! a COPY naming a file or a program is refused: the server never opens a path a client
//! names.

use crate::parse::{parse, Stmt};
use crate::session::Session;
use rnt_lang::value::Type;
use rnt_sql::error::{SqlError, SqlResult};
use rnt_sql::names;
use sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement,
};

/// The data's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFormat {
    /// PostgreSQL's text format: a tab between fields, `\N` for null, backslash escapes.
    Text,
    /// CSV: `,` between fields, `"` quotes, an unquoted empty field for null.
    Csv,
}

/// What a COPY statement asks for.
#[derive(Clone, Debug)]
pub struct CopyPlan {
    /// `COPY … TO STDOUT` (else `FROM STDIN`).
    pub to: bool,
    /// The table COPY FROM writes (`None` for COPY TO).
    pub table: Option<String>,
    /// The columns COPY FROM writes, in the data's order (empty: all, in order).
    pub columns: Vec<String>,
    /// The query COPY TO sends the rows of.
    pub query: String,
    /// Text or CSV.
    pub format: CopyFormat,
    /// CSV's HEADER: a first line of column names (skipped in, written out).
    pub header: bool,
    /// The field delimiter.
    pub delimiter: char,
    /// How null is written (`\N` in text, an empty unquoted field in CSV).
    pub null: String,
    /// CSV's quote character.
    pub quote: char,
}

/// The plan of `text` when it is a COPY statement (`None` otherwise).
pub fn plan(text: &str) -> SqlResult<Option<CopyPlan>> {
    let parsed = parse(text)?;
    let [one] = parsed.as_slice() else {
        return Ok(None);
    };
    let Stmt::Sql(statement) = &one.stmt else {
        return Ok(None);
    };
    let Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options,
        ..
    } = &**statement
    else {
        return Ok(None);
    };
    match target {
        CopyTarget::Stdin | CopyTarget::Stdout => {}
        _ => {
            return Err(SqlError::unsupported(
                "COPY to or from a file or a program on the server (the server never opens a \
                 path a client names: COPY … FROM STDIN or TO STDOUT, or psql's \\copy)",
            ))
        }
    }
    let mut plan = CopyPlan {
        to: *to,
        table: None,
        columns: Vec::new(),
        query: String::new(),
        format: CopyFormat::Text,
        header: false,
        delimiter: '\t',
        null: "\\N".into(),
        quote: '"',
    };
    options_into(&mut plan, options, legacy_options)?;
    match source {
        CopySource::Table {
            table_name,
            columns,
        } => {
            let table = names::object(table_name)?;
            plan.columns = columns.iter().map(names::ident).collect::<SqlResult<_>>()?;
            let shown = match plan.columns.is_empty() {
                true => "*".to_string(),
                false => plan.columns.join(", "),
            };
            plan.query = format!("SELECT {shown} FROM {table}");
            plan.table = Some(table);
        }
        CopySource::Query(query) if *to => plan.query = query.to_string(),
        CopySource::Query(_) => return Err(SqlError::bind("COPY (query) FROM: a query is read")),
    }
    Ok(Some(plan))
}

/// FORMAT, HEADER, DELIMITER, NULL and QUOTE, in either syntax.
fn options_into(
    plan: &mut CopyPlan,
    options: &[CopyOption],
    legacy: &[CopyLegacyOption],
) -> SqlResult<()> {
    let csv = |plan: &mut CopyPlan| {
        plan.format = CopyFormat::Csv;
        plan.delimiter = ',';
        plan.null = String::new();
    };
    for option in options {
        match option {
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("csv") => csv(plan),
            CopyOption::Format(f) if f.value.eq_ignore_ascii_case("text") => {}
            CopyOption::Header(header) => plan.header = *header,
            CopyOption::Delimiter(c) => plan.delimiter = *c,
            CopyOption::Null(null) => plan.null.clone_from(null),
            CopyOption::Quote(c) => plan.quote = *c,
            other => return Err(SqlError::unsupported(format!("the COPY option {other}"))),
        }
    }
    for option in legacy {
        match option {
            CopyLegacyOption::Csv(more) => {
                csv(plan);
                for option in more {
                    match option {
                        CopyLegacyCsvOption::Header => plan.header = true,
                        CopyLegacyCsvOption::Quote(c) => plan.quote = *c,
                        other => {
                            return Err(SqlError::unsupported(format!("the COPY option {other}")))
                        }
                    }
                }
            }
            CopyLegacyOption::Header => plan.header = true,
            CopyLegacyOption::Delimiter(c) => plan.delimiter = *c,
            CopyLegacyOption::Null(null) => plan.null.clone_from(null),
            other => return Err(SqlError::unsupported(format!("the COPY option {other}"))),
        }
    }
    Ok(())
}

/// The INSERT of `rows` (each field's text, `None` for null) into the plan's table: each
/// field read as its column's type (a number bare, a boolean as PostgreSQL spells one,
/// anything else quoted), refused naming the line when it is not one.
pub fn insert_sql(
    session: &Session<'_>,
    plan: &CopyPlan,
    rows: &[Vec<Option<String>>],
) -> SqlResult<String> {
    let table = plan
        .table
        .as_deref()
        .ok_or_else(|| SqlError::bind("COPY FROM names a table"))?;
    let all = session
        .table_columns(table)?
        .ok_or_else(|| SqlError::unknown_relation(format!("unknown table `{table}`")))?;
    let columns: Vec<(String, Type)> = match plan.columns.is_empty() {
        true => all,
        false => plan
            .columns
            .iter()
            .map(|c| {
                all.iter()
                    .find(|(name, _)| name == c)
                    .cloned()
                    .ok_or_else(|| {
                        SqlError::unknown_column(format!("`{table}` has no column `{c}`"))
                    })
            })
            .collect::<SqlResult<_>>()?,
    };
    let mut values = Vec::with_capacity(rows.len());
    for (line, row) in rows.iter().enumerate() {
        if row.len() != columns.len() {
            return Err(SqlError::bind(format!(
                "COPY: row {} has {} fields, the table {} columns",
                line + 1,
                row.len(),
                columns.len()
            )));
        }
        let literals = row
            .iter()
            .zip(&columns)
            .map(|(field, (name, ty))| literal(field.as_deref(), *ty, name, line + 1))
            .collect::<SqlResult<Vec<_>>>()?;
        values.push(format!("({})", literals.join(", ")));
    }
    let names: Vec<String> = columns.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    Ok(format!(
        "INSERT INTO \"{table}\" ({}) VALUES {}",
        names.join(", "),
        values.join(", ")
    ))
}

/// One field as a SQL literal of column `name`'s type.
fn literal(field: Option<&str>, ty: Type, name: &str, row: usize) -> SqlResult<String> {
    let Some(text) = field else {
        return Ok("NULL".into());
    };
    let refused = |what: &str| {
        SqlError::bind(format!(
            "COPY: row {row}, column `{name}`: `{}` is not {what}",
            rnt_lang::diagnostic::clip(text)
        ))
    };
    match ty {
        Type::Int | Type::Decimal { .. } => {
            let trimmed = text.trim();
            let number = !trimmed.is_empty()
                && trimmed
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
            match number {
                true => Ok(trimmed.to_string()),
                false => Err(refused("a number")),
            }
        }
        Type::Bool => match text.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "1" | "yes" | "on" | "y" => Ok("TRUE".into()),
            "f" | "false" | "0" | "no" | "off" | "n" => Ok("FALSE".into()),
            _ => Err(refused("a boolean")),
        },
        _ => Ok(format!("'{}'", text.replace('\'', "''"))),
    }
}
