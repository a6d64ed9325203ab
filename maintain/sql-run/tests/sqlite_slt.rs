//! Runs SQLite's own sqllogictest files (`tests/sqllogictest/`, vendored, public domain:
//! its README says from where) through rnt's SQL, each record twice, on fresh in-memory
//! stores:
//!
//! - **query mode**: every record in file order, each query where it stands;
//! - **view mode**: the file's CREATE TABLEs, then each query as `CREATE MATERIALIZED VIEW
//!   v_<n> (c1, …) AS <query>` (before any insert), then the file's other statements in
//!   order; at each query record its view is read back (`SELECT * FROM v_<n>`, with the
//!   query's positional `ORDER BY` moved onto the read) and compared the same way. The
//!   queries go in batches of `VIEW_BATCH`, each on its own store.
//!
//! Each record is `pass`, `wrong` (an answer that differs, or a `statement error` that
//! succeeds), `division` (wrong or refused, but right once every `/` is `//`: SQLite
//! divides two integers as integers, rnt as DuckDB does), `refused` (kind Unsupported, or
//! a message starting "not supported"), `error` (any other error where success was
//! expected) or `internal` (exit code 70, or a panic). Counts per file and mode are held
//! against `tests/sqllogictest/baseline.txt`: no failure count may rise above its line, so
//! the baseline only improves.
//!
//! - `RNT_SQLITE_SLT=all` runs every file (about an hour: select5's views); unset, the
//!   fixed subset `DEFAULT_FILES` (seconds); otherwise the files whose name holds one of
//!   its comma-separated words.
//! - `RNT_SQLITE_SLT_MODES=query` (or `view`) runs one mode only.
//! - `RNT_SQLITE_SLT_BLESS=1` rewrites the baseline's lines of the files and modes run.
//! - `RNT_SQLITE_SLT_SHOW=wrong,refused,…` prints every record of those verdicts.

use md5::{Digest, Md5};
use rnt_db::{Database, Value};
use rnt_sql_run::SqlErrorKind;
use rnt_sql_run::{Outcome, Session, SqlError};
use rnt_store::MemoryStore;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The engine name `skipif` and `onlyif` records are matched against.
const ENGINE: &str = "rnt";

/// The files run by default: one of the generated files and the smaller evidence files,
/// so a test build finishes well within a minute.
const DEFAULT_FILES: &[&str] = &[
    "select1.test",
    "evidence/in1.test",
    "evidence/in2.test",
    "evidence/slt_lang_aggfunc.test",
    "evidence/slt_lang_createview.test",
    "evidence/slt_lang_update.test",
    "evidence/slt_lang_replace.test",
];

/// How many characters of a message group it in the summary.
const MESSAGE_PREFIX_CHARS: usize = 60;

/// How many message groups the summary lists per verdict.
const TOP_MESSAGES: usize = 10;

// ---------------------------------------------------------------------------------------
// The file format.

/// A result column's type letter: how SQLite's driver renders a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    /// `T`: the value as text.
    Text,
    /// `I`: the value converted to an integer, `printf("%d")`.
    Integer,
    /// `R`: the value converted to a double, `printf("%.3f")`.
    Real,
}

/// How a query's values are ordered before they are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sort {
    /// As the engine returns them.
    None,
    /// Rows sorted (by `strcmp` of each value in turn).
    Rows,
    /// Every value sorted on its own.
    Values,
}

/// The expected answer of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expected {
    /// Each value, one per line.
    Values(Vec<String>),
    /// `N values hashing to H`: the MD5 of the values, each followed by a newline.
    Hash { count: usize, md5: String },
}

/// What a record asks.
#[derive(Clone, Debug)]
enum Kind {
    /// `statement ok` or `statement error`.
    Statement { expect_error: bool },
    /// `query <types> <sort> [label]`.
    Query {
        columns: Vec<Column>,
        sort: Sort,
        expected: Expected,
    },
}

/// One record the engine runs (conditions already applied).
#[derive(Clone, Debug)]
struct Record {
    /// The line of its first line, 1-based.
    line: usize,
    /// The SQL, lines joined with `\n`.
    sql: String,
    kind: Kind,
}

/// A file's records to run, and how many were skipped by `skipif`/`onlyif`.
struct Script {
    records: Vec<Record>,
    skipped: usize,
}

/// Splits `text` into records: groups of lines separated by blank lines, comment lines
/// (`#` first) removed before grouping, each line with its 1-based number.
fn blocks(text: &str) -> Vec<Vec<(usize, &str)>> {
    let mut blocks = Vec::new();
    let mut current: Vec<(usize, &str)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            if !current.is_empty() {
                blocks.push(std::mem::take(&mut current));
            }
        } else {
            current.push((i + 1, line));
        }
    }
    if !current.is_empty() {
        blocks.push(current);
    }
    blocks
}

/// Parses a file; an error names `name:line`.
fn parse(name: &str, text: &str) -> Result<Script, String> {
    let mut script = Script {
        records: Vec::new(),
        skipped: 0,
    };
    for numbered in blocks(text) {
        let lines: Vec<&str> = numbered.iter().map(|(_, l)| *l).collect();
        let mut skip = false;
        let mut at = 0;
        while let Some(words) = lines
            .get(at)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
        {
            let condition = words.first().copied();
            if condition != Some("skipif") && condition != Some("onlyif") {
                break;
            }
            let engine = words.get(1).ok_or_else(|| {
                format!("{name}:{}: a condition without an engine", numbered[at].0)
            })?;
            skip |= (condition == Some("skipif")) == (*engine == ENGINE);
            at += 1;
        }
        let Some(&(line, header)) = numbered.get(at) else {
            let line = numbered.last().map_or(0, |(n, _)| *n);
            return Err(format!("{name}:{line}: a condition without a record"));
        };
        let words: Vec<&str> = header.split_whitespace().collect();
        let body = &lines[at + 1..];
        let kind = match words.first().copied() {
            Some("statement") => statement(&words, name, line)?,
            Some("query") => query(&words, body, name, line)?,
            Some("hash-threshold") => {
                words
                    .get(1)
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or_else(|| format!("{name}:{line}: hash-threshold without a number"))?;
                continue;
            }
            Some("halt") if !skip => break,
            Some("halt") => continue,
            other => return Err(format!("{name}:{line}: unknown record {other:?}")),
        };
        if skip {
            script.skipped += 1;
            continue;
        }
        let sql: Vec<&str> = body.iter().copied().take_while(|l| *l != "----").collect();
        if sql.is_empty() {
            return Err(format!("{name}:{line}: a record without SQL"));
        }
        script.records.push(Record {
            line,
            sql: sql.join("\n"),
            kind,
        });
    }
    Ok(script)
}

/// `statement ok` or `statement error`.
fn statement(words: &[&str], name: &str, line: usize) -> Result<Kind, String> {
    match words.get(1).copied() {
        Some("ok") => Ok(Kind::Statement {
            expect_error: false,
        }),
        Some("error") => Ok(Kind::Statement { expect_error: true }),
        other => Err(format!("{name}:{line}: statement {other:?}")),
    }
}

/// `query <types> [<sort> [<label>]]`, its SQL and expected values in `body`.
fn query(words: &[&str], body: &[&str], name: &str, line: usize) -> Result<Kind, String> {
    let types = words
        .get(1)
        .ok_or_else(|| format!("{name}:{line}: a query without its types"))?;
    let columns = types
        .chars()
        .map(|c| match c {
            'T' => Ok(Column::Text),
            'I' => Ok(Column::Integer),
            'R' => Ok(Column::Real),
            other => Err(format!("{name}:{line}: unknown type letter {other:?}")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sort = match words.get(2).copied() {
        None | Some("nosort") => Sort::None,
        Some("rowsort") => Sort::Rows,
        Some("valuesort") => Sort::Values,
        Some(other) => return Err(format!("{name}:{line}: unknown sort mode {other:?}")),
    };
    let values: Vec<String> = body
        .iter()
        .skip_while(|l| **l != "----")
        .skip(1)
        .map(|l| (*l).to_string())
        .collect();
    let expected = match values.as_slice() {
        [only] => hash_line(only).unwrap_or_else(|| Expected::Values(values.clone())),
        _ => Expected::Values(values),
    };
    Ok(Kind::Query {
        columns,
        sort,
        expected,
    })
}

/// `N values hashing to H` as an expected hash.
fn hash_line(line: &str) -> Option<Expected> {
    let (count, rest) = line.split_once(" values hashing to ")?;
    Some(Expected::Hash {
        count: count.parse().ok()?,
        md5: rest.trim().to_string(),
    })
}

// ---------------------------------------------------------------------------------------
// Values as SQLite's driver prints them.

/// A value as `slt_sqlite.c` renders a column of type `column`: NULL as `NULL`; `I` as the
/// value converted to an integer (a real truncated toward zero, text by its leading
/// digits, a boolean as 0 or 1); `R` as `%.3f` of the value as a double; `T` as text, the
/// empty string as `(empty)` and bytes outside printable ASCII as `@`.
fn render(value: &Value, column: Column) -> String {
    if *value == Value::Null {
        return "NULL".into();
    }
    match column {
        Column::Integer => match value {
            Value::Int(i) => i.to_string(),
            Value::Bool(b) => u8::from(*b).to_string(),
            Value::Decimal(d) => d
                .truncate(0)
                .map_or_else(|| d.to_string(), |t| t.units().to_string()),
            // A real truncated toward zero (C's cast, saturating as Rust's).
            #[allow(clippy::cast_possible_truncation)]
            Value::Float(x) => (x.to_f64().trunc() as i64).to_string(),
            other => leading_integer(&text(other)).to_string(),
        },
        Column::Real => match value {
            Value::Int(i) => format!("{i}.000"),
            Value::Bool(b) => format!("{}.000", u8::from(*b)),
            Value::Float(x) => format!("{:.3}", x.to_f64()),
            other => format!("{:.3}", leading_real(&text(other))),
        },
        Column::Text => {
            let text = text(value);
            if text.is_empty() {
                return "(empty)".into();
            }
            text.bytes()
                .map(|b| {
                    if (b' '..=b'~').contains(&b) {
                        char::from(b)
                    } else {
                        '@'
                    }
                })
                .collect()
        }
    }
}

/// A value's text, as SQLite would print it: booleans as 0 and 1.
fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => u8::from(*b).to_string(),
        Value::Decimal(d) => d.to_string(),
        Value::Float(x) => x.text(),
        Value::Date(days) => rnt_lang::time::format_date(*days),
        Value::Timestamp(micros) => {
            let iso = rnt_lang::time::format_timestamp(*micros);
            iso.trim_end_matches('Z').replace('T', " ")
        }
    }
}

/// The integer a text starts with (SQLite's text-to-integer conversion), 0 if none.
fn leading_integer(text: &str) -> i64 {
    let text = text.trim_start();
    let end = text
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(text.len(), |(i, _)| i);
    text[..end].parse().unwrap_or(0)
}

/// The number a text starts with (SQLite's text-to-real conversion), 0 if none.
fn leading_real(text: &str) -> f64 {
    let text = text.trim_start();
    (1..=text.len())
        .rev()
        .filter(|&end| text.is_char_boundary(end))
        .find_map(|end| text[..end].parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// The values of `rows` rendered by `columns` and ordered by `sort`, flattened; `Err` says
/// why they cannot be compared (a row of the wrong width).
fn values(rows: &[Vec<Value>], columns: &[Column], sort: Sort) -> Result<Vec<String>, String> {
    let mut rendered = Vec::with_capacity(rows.len());
    for row in rows {
        if row.len() != columns.len() {
            return Err(format!("{} columns, expected {}", row.len(), columns.len()));
        }
        let row: Vec<String> = row
            .iter()
            .zip(columns)
            .map(|(v, c)| render(v, *c))
            .collect();
        rendered.push(row);
    }
    if sort == Sort::Rows {
        rendered.sort();
    }
    let mut flat: Vec<String> = rendered.into_iter().flatten().collect();
    if sort == Sort::Values {
        flat.sort();
    }
    Ok(flat)
}

/// Whether `got` is the expected answer.
fn agrees(got: &[String], expected: &Expected) -> bool {
    match expected {
        Expected::Values(want) => got == want.as_slice(),
        Expected::Hash { count, md5 } => got.len() == *count && digest(got) == *md5,
    }
}

/// The MD5, in lowercase hex, of `values` each followed by a newline.
fn digest(values: &[String]) -> String {
    let mut hasher = Md5::new();
    for value in values {
        hasher.update(value.as_bytes());
        hasher.update(b"\n");
    }
    hasher
        .finalize()
        .iter()
        .fold(String::new(), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

// ---------------------------------------------------------------------------------------
// Running statements.

/// How a record went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Pass,
    Wrong,
    Division,
    Refused,
    Error,
    Internal,
}

impl Verdict {
    /// Every verdict, in the columns' order.
    const ALL: [Verdict; 6] = [
        Verdict::Pass,
        Verdict::Wrong,
        Verdict::Division,
        Verdict::Refused,
        Verdict::Error,
        Verdict::Internal,
    ];

    /// The verdict's column name.
    fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Wrong => "wrong",
            Verdict::Division => "division",
            Verdict::Refused => "refused",
            Verdict::Error => "error",
            Verdict::Internal => "internal",
        }
    }
}

/// A failed statement: its verdict (refused, error or internal) and message.
#[derive(Clone, Debug)]
struct Failure {
    verdict: Verdict,
    message: String,
}

/// The verdict an error stands for.
fn failure(error: &SqlError) -> Failure {
    let verdict =
        if error.kind == SqlErrorKind::Unsupported || error.message.starts_with("not supported") {
            Verdict::Refused
        } else if error.kind == SqlErrorKind::Db(70) {
            Verdict::Internal
        } else {
            Verdict::Error
        };
    Failure {
        verdict,
        message: error.message.clone(),
    }
}

/// Runs one statement; a panic is an internal failure.
fn execute(session: &mut Session, sql: &str) -> Result<Vec<Outcome>, Failure> {
    match catch_unwind(AssertUnwindSafe(|| session.run(sql))) {
        Ok(Ok(outcomes)) => Ok(outcomes),
        Ok(Err((_, error))) => Err(failure(&error)),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Failure {
                verdict: Verdict::Internal,
                message: format!("panic: {message}"),
            })
        }
    }
}

/// Runs a query; its rows.
fn rows(session: &mut Session, sql: &str) -> Result<Vec<Vec<Value>>, Failure> {
    match execute(session, sql)?.pop() {
        Some(Outcome::Rows { rows, .. }) => Ok(rows),
        other => Err(Failure {
            verdict: Verdict::Error,
            message: format!("gave {other:?}, not rows"),
        }),
    }
}

/// What happened to a record: its verdict and, unless it passed, why.
struct Judged {
    verdict: Verdict,
    detail: String,
}

impl From<Failure> for Judged {
    fn from(f: Failure) -> Judged {
        Judged {
            verdict: f.verdict,
            detail: f.message,
        }
    }
}

/// A verdict without a detail.
fn judged(verdict: Verdict) -> Judged {
    Judged {
        verdict,
        detail: String::new(),
    }
}

/// Judges a statement record by running it.
fn judge_statement(session: &mut Session, sql: &str, expect_error: bool) -> Judged {
    match (execute(session, sql), expect_error) {
        (Ok(_), false) | (Err(_), true) => judged(Verdict::Pass),
        (Ok(_), true) => Judged {
            verdict: Verdict::Wrong,
            detail: "succeeded, expected an error".into(),
        },
        (Err(f), false) => f.into(),
    }
}

/// A query record's parts.
fn query_parts(record: &Record) -> (&[Column], Sort, &Expected) {
    match &record.kind {
        Kind::Query {
            columns,
            sort,
            expected,
        } => (columns, *sort, expected),
        Kind::Statement { .. } => unreachable!("a statement record has no answer"),
    }
}

/// The compared values `sql` gives as a query of `record`'s shape, if it runs.
fn answer(session: &mut Session, record: &Record, sql: &str) -> Option<Vec<String>> {
    let (columns, sort, _) = query_parts(record);
    rows(session, sql)
        .ok()
        .and_then(|rows| values(&rows, columns, sort).ok())
}

/// Whether the record holds a `/` and passes once every `/` is `//`: SQLite divides two
/// integers as integers, rnt as DuckDB does (a double).
fn passes_as_integer_division(session: &mut Session, record: &Record) -> bool {
    let (_, _, expected) = query_parts(record);
    record.sql.contains('/')
        && answer(session, record, &record.sql.replace('/', "//"))
            .is_some_and(|got| agrees(&got, expected))
}

/// Judges the rows a query record read: by running `record.sql` (query mode), or from its
/// view (view mode: `from_view`). A failure or a wrong answer is `division` when the query
/// passes with `//` for `/` (and, for a view, the view holds what the query gives).
fn judge_rows(
    session: &mut Session,
    record: &Record,
    read: Result<Vec<Vec<Value>>, Failure>,
    from_view: bool,
) -> Judged {
    let (columns, sort, expected) = query_parts(record);
    let got = match read.map(|rows| values(&rows, columns, sort)) {
        Err(f) if !from_view && passes_as_integer_division(session, record) => {
            return Judged {
                verdict: Verdict::Division,
                detail: f.message,
            }
        }
        Err(f) => return f.into(),
        Ok(Err(width)) => return wrong(width),
        Ok(Ok(got)) => got,
    };
    if agrees(&got, expected) {
        return judged(Verdict::Pass);
    }
    let detail = difference(&got, expected);
    let consistent = !from_view || answer(session, record, &record.sql).as_ref() == Some(&got);
    if consistent && passes_as_integer_division(session, record) {
        return Judged {
            verdict: Verdict::Division,
            detail,
        };
    }
    wrong(detail)
}

/// A wrong verdict saying `detail`.
fn wrong(detail: String) -> Judged {
    Judged {
        verdict: Verdict::Wrong,
        detail,
    }
}

/// What differs between an answer and the expected one, briefly.
fn difference(got: &[String], expected: &Expected) -> String {
    let shown = |v: &[String]| {
        let head: Vec<&str> = v.iter().take(8).map(String::as_str).collect();
        let more = if v.len() > 8 { ", …" } else { "" };
        format!("[{}{more}]", head.join(", "))
    };
    match expected {
        Expected::Values(want) => format!("expected {}, got {}", shown(want), shown(got)),
        Expected::Hash { count, .. } => format!(
            "expected {count} values (hashed), got {} values {}",
            got.len(),
            shown(got)
        ),
    }
}

// ---------------------------------------------------------------------------------------
// The two modes.

/// A mode of running a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    /// Each query run where it stands.
    Query,
    /// Each query as a materialized view made before the file's DML.
    View,
}

impl Mode {
    /// The mode's name in the baseline.
    fn name(self) -> &'static str {
        match self {
            Mode::Query => "query",
            Mode::View => "view",
        }
    }
}

/// A record's verdict, where it is, and why.
#[derive(Clone, Debug)]
struct Note {
    line: usize,
    verdict: Verdict,
    detail: String,
    sql: String,
    /// How long it took (query mode; zero in view mode, whose work is shared by a batch).
    took: Duration,
}

/// A record's note.
fn note(record: &Record, judged: Judged) -> Note {
    Note {
        line: record.line,
        verdict: judged.verdict,
        detail: judged.detail,
        sql: record.sql.clone(),
        took: Duration::ZERO,
    }
}

/// The first `statement ok` of a run that failed: the answers after it are judged on a
/// state SQLite never had, and a wrong one says so.
#[derive(Default)]
struct FirstFailure(Option<usize>);

impl FirstFailure {
    /// Notes a failed statement; prefixes a wrong answer after one with its line.
    fn mark(&mut self, record: &Record, mut judged: Judged) -> Judged {
        match record.kind {
            Kind::Statement {
                expect_error: false,
            } if judged.verdict != Verdict::Pass => {
                self.0.get_or_insert(record.line);
            }
            Kind::Query { .. } if judged.verdict == Verdict::Wrong => {
                if let Some(line) = self.0 {
                    judged.detail = format!(
                        "after the failed statement at line {line}: {}",
                        judged.detail
                    );
                }
            }
            _ => {}
        }
        judged
    }
}

/// Runs the records of a file as they stand: statements, and each query where it is.
fn run_queries(script: &Script) -> Vec<Note> {
    let db = Database::new(Arc::new(MemoryStore::new()));
    let mut session = Session::new(&db);
    let mut notes = Vec::with_capacity(script.records.len());
    let mut failed = FirstFailure::default();
    for record in &script.records {
        let start = Instant::now();
        let judged = match &record.kind {
            Kind::Statement { expect_error } => {
                judge_statement(&mut session, &record.sql, *expect_error)
            }
            Kind::Query { .. } => {
                let read = rows(&mut session, &record.sql);
                judge_rows(&mut session, record, read, false)
            }
        };
        let judged = failed.mark(record, judged);
        notes.push(Note {
            took: start.elapsed(),
            ..note(record, judged)
        });
    }
    notes
}

/// Whether a statement creates a table (run before the views in view mode).
fn creates_table(record: &Record) -> bool {
    matches!(record.kind, Kind::Statement { .. })
        && starts_with_words(&record.sql, &["CREATE", "TABLE"])
}

/// Whether `sql`'s first words are `words`, in any case.
fn starts_with_words(sql: &str, words: &[&str]) -> bool {
    let mut found = sql.split_whitespace();
    words
        .iter()
        .all(|w| found.next().is_some_and(|f| f.eq_ignore_ascii_case(w)))
}

/// A query split for a view: the SELECT without a trailing positional `ORDER BY`, and that
/// ORDER BY's terms (`1, 2 DESC`), which the read of the view takes; `None` for anything
/// but a SELECT.
fn view_body(sql: &str) -> Option<(String, Option<String>)> {
    if !starts_with_words(sql, &["SELECT"]) {
        return None;
    }
    let upper = sql.to_ascii_uppercase();
    let Some(at) = upper.rfind("ORDER BY") else {
        return Some((sql.to_string(), None));
    };
    let terms = &sql[at + "ORDER BY".len()..];
    let positional = terms.split(',').all(|term| {
        let words: Vec<&str> = term.split_whitespace().collect();
        let direction = |d: &str| d.eq_ignore_ascii_case("ASC") || d.eq_ignore_ascii_case("DESC");
        match words.as_slice() {
            [n] => n.parse::<usize>().is_ok(),
            [n, d] => n.parse::<usize>().is_ok() && direction(d),
            _ => false,
        }
    });
    if positional {
        Some((sql[..at].to_string(), Some(terms.trim().to_string())))
    } else {
        Some((sql.to_string(), None))
    }
}

/// A query's view as made: its name, the ORDER BY terms its read takes, and, when only the
/// query with `//` for `/` made a view, why the query as written did not.
struct View {
    name: String,
    order: Option<String>,
    refused_as_written: Option<Failure>,
}

/// Creates the view of query record `n` (named `v_<n>`), or of the query with `//` for `/`
/// when only that one is accepted.
fn create_view(session: &mut Session, record: &Record, n: usize) -> Result<View, Failure> {
    let (columns, _, _) = query_parts(record);
    let Some((body, order)) = view_body(&record.sql) else {
        return Err(Failure {
            verdict: Verdict::Refused,
            message: "not supported (by the runner): a view of anything but a SELECT".into(),
        });
    };
    let name = format!("v_{n}");
    let names: Vec<String> = (1..=columns.len()).map(|c| format!("c{c}")).collect();
    let create = |body: &str| {
        format!(
            "CREATE MATERIALIZED VIEW {name} ({}) AS {body}",
            names.join(", ")
        )
    };
    let refused = match execute(session, &create(&body)) {
        Ok(_) => None,
        Err(f) if body.contains('/') => Some(f),
        Err(f) => return Err(f),
    };
    if let Some(f) = refused {
        execute(session, &create(&body.replace('/', "//"))).map_err(|_| f.clone())?;
        return Ok(View {
            name,
            order,
            refused_as_written: Some(f),
        });
    }
    Ok(View {
        name,
        order,
        refused_as_written: None,
    })
}

/// Judges a query record by reading its view (in its state after the DML before it).
fn judge_view(session: &mut Session, record: &Record, view: &Result<View, Failure>) -> Judged {
    let view = match view {
        Ok(view) => view,
        Err(f) => return f.clone().into(),
    };
    let read = match &view.order {
        Some(terms) => format!("SELECT * FROM {} ORDER BY {terms}", view.name),
        None => format!("SELECT * FROM {}", view.name),
    };
    let read = rows(session, &read);
    match &view.refused_as_written {
        None => judge_rows(session, record, read, true),
        Some(f) => {
            let (columns, sort, expected) = query_parts(record);
            let got = read.ok().and_then(|rows| values(&rows, columns, sort).ok());
            let verdict = if got.is_some_and(|got| agrees(&got, expected)) {
                Verdict::Division
            } else {
                f.verdict
            };
            Judged {
                verdict,
                detail: f.message.clone(),
            }
        }
    }
}

/// The most query records view mode holds as views on one store: a file's queries run in
/// batches of this many, each batch on its own store with all of the file's statements.
/// A commit costs more than linearly in the views of the store (each query, a keyed
/// INSERT's key check included, re-plans the whole program): select1's 473 views took
/// 54 s on one store, 16 s in batches of 200, 5.4 s of 50 and 3.6 s of 25.
const VIEW_BATCH: usize = 25;

/// Runs a file in view mode: for each batch of its query records, the
/// file's CREATE TABLEs, the batch's views, then the other statements in order, each query
/// of the batch judged by reading its view where the query stands. A statement's verdict
/// is its worst over the batches.
fn run_views(script: &Script) -> Vec<Note> {
    let queries: Vec<usize> = (0..script.records.len())
        .filter(|&i| matches!(script.records[i].kind, Kind::Query { .. }))
        .collect();
    let mut notes: Vec<Option<Note>> = vec![None; script.records.len()];
    let batches: Vec<&[usize]> = if queries.is_empty() {
        vec![&[]]
    } else {
        queries.chunks(VIEW_BATCH).collect()
    };
    for batch in batches {
        run_view_batch(script, batch, &mut notes);
    }
    notes.into_iter().flatten().collect()
}

/// One batch of view mode (`run_views`): `batch` holds the indexes of its query records.
fn run_view_batch(script: &Script, batch: &[usize], notes: &mut [Option<Note>]) {
    let db = Database::new(Arc::new(MemoryStore::new()));
    let mut session = Session::new(&db);
    let mut failed = FirstFailure::default();
    let mut keep = |notes: &mut [Option<Note>], i: usize, judged: Judged| {
        let judged = failed.mark(&script.records[i], judged);
        let worse = notes[i]
            .as_ref()
            .is_none_or(|n| n.verdict == Verdict::Pass && judged.verdict != Verdict::Pass);
        if worse {
            notes[i] = Some(note(&script.records[i], judged));
        }
    };
    let statement = |session: &mut Session, record: &Record| match record.kind {
        Kind::Statement { expect_error } => judge_statement(session, &record.sql, expect_error),
        Kind::Query { .. } => unreachable!("a query is not a statement"),
    };
    let tables: Vec<usize> = (0..script.records.len())
        .filter(|&i| creates_table(&script.records[i]))
        .collect();
    for &i in &tables {
        keep(notes, i, statement(&mut session, &script.records[i]));
    }
    let mut views: BTreeMap<usize, Result<View, Failure>> = BTreeMap::new();
    for &i in batch {
        views.insert(i, create_view(&mut session, &script.records[i], i));
    }
    for (i, record) in script.records.iter().enumerate() {
        let judged = match (&record.kind, views.get(&i)) {
            _ if tables.contains(&i) => continue,
            (Kind::Statement { .. }, _) => statement(&mut session, record),
            (Kind::Query { .. }, Some(view)) => judge_view(&mut session, record, view),
            (Kind::Query { .. }, None) => continue,
        };
        keep(notes, i, judged);
    }
}

// ---------------------------------------------------------------------------------------
// Counting, the baseline, the summary.

/// Counts of one file in one mode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Tally {
    records: usize,
    /// Indexed as `Verdict::ALL`.
    verdicts: [usize; 6],
}

impl Tally {
    /// The counts of `notes`.
    fn of(notes: &[Note]) -> Tally {
        let mut tally = Tally {
            records: notes.len(),
            ..Tally::default()
        };
        for note in notes {
            tally.verdicts[note.verdict as usize] += 1;
        }
        tally
    }

    /// The baseline line's numbers: `records pass wrong division refused error internal`.
    fn numbers(&self) -> String {
        let verdicts: Vec<String> = self.verdicts.iter().map(usize::to_string).collect();
        format!("{} {}", self.records, verdicts.join(" "))
    }
}

/// The run of one file in one mode.
struct Run {
    file: String,
    mode: Mode,
    tally: Tally,
    notes: Vec<Note>,
    took: Duration,
}

/// The vendored corpus.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sqllogictest")
}

/// Every `.test` file under `dir`, as paths relative to the corpus with `/`.
fn test_files(dir: &Path, relative: &str, into: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).expect("tests/sqllogictest reads");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let relative = format!("{relative}{name}");
        if path.is_dir() {
            test_files(&path, &format!("{relative}/"), into);
        } else if name.ends_with(".test") {
            into.push(relative);
        }
    }
}

/// The files this run covers, per `RNT_SQLITE_SLT`.
fn selected_files() -> Vec<String> {
    let mut all = Vec::new();
    test_files(&corpus(), "", &mut all);
    all.sort();
    let selection = std::env::var("RNT_SQLITE_SLT").unwrap_or_default();
    let words: Vec<&str> = selection.split(',').filter(|w| !w.is_empty()).collect();
    match words.as_slice() {
        [] => {
            let files: Vec<String> = DEFAULT_FILES.iter().map(|f| (*f).to_string()).collect();
            assert!(
                files.iter().all(|f| all.contains(f)),
                "a default file is missing"
            );
            files
        }
        ["all"] => all,
        words => all
            .into_iter()
            .filter(|f| words.iter().any(|w| f.contains(w)))
            .collect(),
    }
}

/// The modes `RNT_SQLITE_SLT_MODES` names (`query`, `view`; both when unset).
fn selected_modes() -> Vec<Mode> {
    let wanted = std::env::var("RNT_SQLITE_SLT_MODES").unwrap_or_default();
    [Mode::Query, Mode::View]
        .into_iter()
        .filter(|m| wanted.is_empty() || wanted.split(',').any(|w| w == m.name()))
        .collect()
}

/// Runs one file in each selected mode.
fn run_file(file: &str) -> Vec<Run> {
    let text = std::fs::read_to_string(corpus().join(file)).expect("a corpus file reads");
    let script = parse(file, &text).unwrap_or_else(|e| panic!("{e}"));
    let mut runs = Vec::new();
    for mode in selected_modes() {
        let start = Instant::now();
        let notes = match mode {
            Mode::Query => run_queries(&script),
            Mode::View => run_views(&script),
        };
        runs.push(Run {
            file: file.to_string(),
            mode,
            tally: Tally::of(&notes),
            notes,
            took: start.elapsed(),
        });
    }
    for run in &runs {
        eprintln!(
            "{file}: {} {} records ({} skipped), {:.1} s: {}",
            run.mode.name(),
            script.records.len(),
            script.skipped,
            run.took.as_secs_f64(),
            run.tally.numbers()
        );
    }
    runs
}

/// The baseline file.
fn baseline_path() -> PathBuf {
    corpus().join("baseline.txt")
}

/// The baseline's lines: `(file, mode)` to its counts.
fn read_baseline() -> BTreeMap<(String, String), Tally> {
    let path = baseline_path();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut baseline = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let numbers: Option<Vec<usize>> = fields.iter().skip(2).map(|f| f.parse().ok()).collect();
        let (Some(numbers), [file, mode, ..]) = (numbers, fields.as_slice()) else {
            panic!("baseline.txt:{}: not `file mode n n n n n n n`", i + 1);
        };
        let [records, verdicts @ ..] = numbers.as_slice() else {
            panic!("baseline.txt:{}: no counts", i + 1);
        };
        let verdicts: [usize; 6] = verdicts
            .try_into()
            .unwrap_or_else(|_| panic!("baseline.txt:{}: not 7 counts", i + 1));
        let tally = Tally {
            records: *records,
            verdicts,
        };
        baseline.insert(((*file).to_string(), (*mode).to_string()), tally);
    }
    baseline
}

/// Writes the baseline with the lines of `runs` replaced.
fn bless(mut baseline: BTreeMap<(String, String), Tally>, runs: &[Run]) {
    for run in runs {
        let key = (run.file.clone(), run.mode.name().to_string());
        baseline.insert(key, run.tally.clone());
    }
    let mut text = String::from(
        "# SQLite's sqllogictest files through rnt's SQL (maintain/sql-run/tests/sqlite_slt.rs):\n\
         # per file and mode, the records run and how many had each verdict. No failure count\n\
         # may rise above its line; RNT_SQLITE_SLT_BLESS=1 rewrites the lines of the files and\n\
         # modes run.\n\
         # file mode records pass wrong division refused error internal\n",
    );
    for ((file, mode), tally) in &baseline {
        let _ = writeln!(text, "{file} {mode} {}", tally.numbers());
    }
    std::fs::write(baseline_path(), text).expect("the baseline writes");
}

/// What is worse in a run than in its baseline line, one message per count that rose.
fn regressions(run: &Run, baseline: &BTreeMap<(String, String), Tally>) -> Vec<String> {
    let key = (run.file.clone(), run.mode.name().to_string());
    let Some(base) = baseline.get(&key) else {
        return vec![format!(
            "{} {}: no baseline line (run with RNT_SQLITE_SLT_BLESS=1)",
            run.file,
            run.mode.name()
        )];
    };
    let mut out = Vec::new();
    if base.records != run.tally.records {
        out.push(format!(
            "{} {}: {} records, the baseline has {}",
            run.file,
            run.mode.name(),
            run.tally.records,
            base.records
        ));
    }
    for verdict in &Verdict::ALL[1..] {
        let (now, was) = (
            run.tally.verdicts[*verdict as usize],
            base.verdicts[*verdict as usize],
        );
        if now > was {
            out.push(format!(
                "{} {}: {now} {}, the baseline allows {was}",
                run.file,
                run.mode.name(),
                verdict.name()
            ));
        }
    }
    out
}

/// The table of counts, one line per file and mode and a total per mode.
fn table(runs: &[Run]) -> String {
    let mut out = format!(
        "{:<36} {:<5} {:>7} {:>6} {:>6} {:>8} {:>7} {:>6} {:>8} {:>8}\n",
        "file",
        "mode",
        "records",
        "pass",
        "wrong",
        "division",
        "refused",
        "error",
        "internal",
        "seconds"
    );
    let line = |out: &mut String, file: &str, mode: &str, t: &Tally, took: Duration| {
        let v = &t.verdicts;
        let _ = writeln!(
            out,
            "{file:<36} {mode:<5} {:>7} {:>6} {:>6} {:>8} {:>7} {:>6} {:>8} {:>8.1}",
            t.records,
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            took.as_secs_f64()
        );
    };
    for run in runs {
        line(&mut out, &run.file, run.mode.name(), &run.tally, run.took);
    }
    for mode in [Mode::Query, Mode::View] {
        let mut total = Tally::default();
        let mut took = Duration::ZERO;
        for run in runs.iter().filter(|r| r.mode == mode) {
            total.records += run.tally.records;
            for (t, v) in total.verdicts.iter_mut().zip(run.tally.verdicts) {
                *t += v;
            }
            took += run.took;
        }
        line(&mut out, "total", mode.name(), &total, took);
    }
    out
}

/// The most frequent messages of `verdict` in each mode, grouped by their first
/// `MESSAGE_PREFIX_CHARS` characters.
fn top_messages(runs: &[Run], verdict: Verdict) -> String {
    let mut out = String::new();
    for mode in [Mode::Query, Mode::View] {
        let mut groups: BTreeMap<String, usize> = BTreeMap::new();
        for note in runs
            .iter()
            .filter(|r| r.mode == mode)
            .flat_map(|r| &r.notes)
            .filter(|n| n.verdict == verdict)
        {
            let first = note.detail.lines().next().unwrap_or_default();
            let key: String = first.chars().take(MESSAGE_PREFIX_CHARS).collect();
            *groups.entry(key).or_default() += 1;
        }
        if groups.is_empty() {
            continue;
        }
        let mut groups: Vec<(String, usize)> = groups.into_iter().collect();
        groups.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let _ = writeln!(
            out,
            "top {} messages, {} mode:",
            verdict.name(),
            mode.name()
        );
        for (message, count) in groups.iter().take(TOP_MESSAGES) {
            let _ = writeln!(out, "  {count:>6}  {message}");
        }
    }
    out
}

/// The records query mode spent longest on.
fn slowest(runs: &[Run]) -> String {
    let mut all: Vec<(&Run, &Note)> = runs
        .iter()
        .filter(|r| r.mode == Mode::Query)
        .flat_map(|r| r.notes.iter().map(move |n| (r, n)))
        .collect();
    all.sort_by_key(|(_, note)| std::cmp::Reverse(note.took));
    let mut out = String::from("slowest records, query mode:\n");
    for (run, note) in all.iter().take(TOP_MESSAGES) {
        let first = note.sql.lines().next().unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:>8.2} s  {}:{} [{}] {first}",
            note.took.as_secs_f64(),
            run.file,
            note.line,
            note.verdict.name()
        );
    }
    out
}

/// Every record of the verdicts `RNT_SQLITE_SLT_SHOW` names.
fn shown(runs: &[Run]) -> String {
    let show = std::env::var("RNT_SQLITE_SLT_SHOW").unwrap_or_default();
    let wanted: Vec<&str> = show.split(',').filter(|w| !w.is_empty()).collect();
    let mut out = String::new();
    for run in runs {
        for note in run
            .notes
            .iter()
            .filter(|n| wanted.contains(&n.verdict.name()))
        {
            let _ = writeln!(
                out,
                "{}:{} [{} {}] {}\n  {}",
                run.file,
                note.line,
                run.mode.name(),
                note.verdict.name(),
                note.detail,
                note.sql.replace('\n', "\n  ")
            );
        }
    }
    out
}

#[test]
fn sqlite_sqllogictest_counts_do_not_regress() {
    let files = selected_files();
    assert!(!files.is_empty(), "no sqllogictest file selected");
    let mut runs = Vec::new();
    for file in &files {
        let of_file = run_file(file);
        eprint!("{}", shown(&of_file));
        runs.extend(of_file);
    }
    eprint!("{}", table(&runs));
    eprint!("{}", slowest(&runs));
    for verdict in [
        Verdict::Refused,
        Verdict::Error,
        Verdict::Internal,
        Verdict::Wrong,
    ] {
        eprint!("{}", top_messages(&runs, verdict));
    }
    let baseline = read_baseline();
    if std::env::var("RNT_SQLITE_SLT_BLESS").is_ok_and(|v| v == "1") {
        bless(baseline, &runs);
        return;
    }
    let worse: Vec<String> = runs
        .iter()
        .flat_map(|r| regressions(r, &baseline))
        .collect();
    assert!(
        worse.is_empty(),
        "worse than tests/sqllogictest/baseline.txt \
         (RNT_SQLITE_SLT_SHOW=wrong,internal lists the records):\n{}",
        worse.join("\n")
    );
}

#[test]
fn values_render_and_hash_as_sqlite_s_driver_does() {
    let d = |s: &str| Value::Decimal(rnt_lang::decimal::Decimal::parse(s).expect("a decimal"));
    assert_eq!(render(&Value::Null, Column::Integer), "NULL");
    assert_eq!(render(&d("-7.9"), Column::Integer), "-7");
    assert_eq!(render(&Value::Int(3), Column::Real), "3.000");
    assert_eq!(render(&d("2.5"), Column::Real), "2.500");
    assert_eq!(render(&Value::Str(String::new()), Column::Text), "(empty)");
    assert_eq!(render(&Value::Str("12ab".into()), Column::Integer), "12");
    assert_eq!(render(&Value::Bool(true), Column::Integer), "1");
    // The MD5 of "1\n2\n", as `md5sum` gives it.
    assert_eq!(
        digest(&["1".to_string(), "2".to_string()]),
        "6ddb4095eb719e2a9f0a3f95677d24e0"
    );
}
