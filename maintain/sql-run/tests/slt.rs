//! Runs the sqllogictest corpus in `tests/sql/*.slt` through rnt's SQL (each file on a
//! fresh in-memory store): `statement ok`, `statement error <text>` (the message holds the
//! text), and `query <types> [rowsort|nosort]` whose rows (tab-separated, `NULL` for null,
//! `(empty)` for the empty string) must equal the expected ones — computed with DuckDB
//! 2.0.1 by `tests/sql/make_slt.py`, kept in the repository (not in CI's path).
//!
//! `RNT_SLT_FILTER=name` runs the files whose name holds `name`.

use rnt_db::{Database, Value};
use rnt_sql_run::{Outcome, Session};
use rnt_store::MemoryStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One record of a file.
#[derive(Debug)]
enum Record {
    Statement {
        sql: String,
        error: Option<String>,
        line: usize,
    },
    Query {
        sql: String,
        sort: bool,
        expected: Vec<String>,
        line: usize,
    },
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sql")
}

fn parse(text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.is_empty() || line.starts_with('#') {
            i += 1;
            continue;
        }
        let start = i + 1;
        let header: Vec<&str> = line.split_whitespace().collect();
        i += 1;
        let mut sql = Vec::new();
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i].trim() != "----" {
            sql.push(lines[i]);
            i += 1;
        }
        let sql = sql.join("\n");
        match header.first().copied() {
            Some("statement") => {
                let error = match header.get(1).copied() {
                    Some("error") => {
                        Some(line.splitn(3, ' ').nth(2).unwrap_or("").trim().to_string())
                    }
                    _ => None,
                };
                records.push(Record::Statement {
                    sql,
                    error,
                    line: start,
                });
            }
            Some("query") => {
                let mut expected = Vec::new();
                if i < lines.len() && lines[i].trim() == "----" {
                    i += 1;
                    while i < lines.len() && !lines[i].trim().is_empty() {
                        expected.push(lines[i].to_string());
                        i += 1;
                    }
                }
                let sort = header.get(2).copied() != Some("nosort");
                records.push(Record::Query {
                    sql,
                    sort,
                    expected,
                    line: start,
                });
            }
            other => panic!("line {start}: unknown record {other:?}"),
        }
    }
    records
}

/// A value as the corpus writes it (DuckDB's text forms).
fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::Str(s) if s.is_empty() => "(empty)".into(),
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Decimal(d) => d.to_string(),
        Value::Float(x) => x.text(),
        Value::Date(days) => rnt_lang::time::format_date(*days),
        Value::Timestamp(micros) => {
            let iso = rnt_lang::time::format_timestamp(*micros);
            iso.trim_end_matches('Z').replace('T', " ")
        }
    }
}

/// Runs one file; returns its failures.
fn run_file(path: &Path) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("the file reads");
    let db = Database::new(Arc::new(MemoryStore::new()));
    let mut session = Session::new(&db);
    let mut failures = Vec::new();
    let records = parse(&text);
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    for record in &records {
        match record {
            Record::Statement { sql, error, line } => match (session.run(sql), error) {
                (Ok(_), None) => {}
                (Err((_, e)), Some(expected)) if e.message.contains(expected.as_str()) => {}
                (Err((_, e)), None) => failures.push(format!("{name}:{line}: {sql}\n  failed: {e}")),
                (Err((_, e)), Some(expected)) => failures.push(format!("{name}:{line}: {sql}\n  failed with `{e}`, expected an error holding `{expected}`")),
                (Ok(_), Some(expected)) => failures.push(format!("{name}:{line}: {sql}\n  succeeded, expected an error holding `{expected}`")),
            },
            Record::Query { sql, sort, expected, line } => {
                let rows = match session.run(sql) {
                    Ok(outcomes) => match outcomes.into_iter().last() {
                        Some(Outcome::Rows { rows, .. }) => rows,
                        other => {
                            failures.push(format!("{name}:{line}: {sql}\n  gave {other:?}, not rows"));
                            continue;
                        }
                    },
                    Err((_, e)) => {
                        failures.push(format!("{name}:{line}: {sql}\n  failed: {e}"));
                        continue;
                    }
                };
                let mut got: Vec<String> = rows
                    .iter()
                    .map(|row| row.iter().map(value_text).collect::<Vec<_>>().join("\t"))
                    .collect();
                let mut want = expected.clone();
                if *sort {
                    got.sort();
                    want.sort();
                }
                if got != want {
                    failures.push(format!(
                        "{name}:{line}: {sql}\n  expected {want:?}\n  got      {got:?}"
                    ));
                }
            }
        }
    }
    (records.len(), failures)
}

#[test]
fn the_corpus_agrees_with_duckdb() {
    let filter = std::env::var("RNT_SLT_FILTER").ok();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/sql exists")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| {
            filter
                .as_ref()
                .is_none_or(|f| p.to_string_lossy().contains(f.as_str()))
        })
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .slt files");
    let mut records = 0;
    let mut failures = Vec::new();
    for path in &paths {
        let (n, f) = run_file(path);
        records += n;
        failures.extend(f);
    }
    eprintln!(
        "{records} records in {} files, {} failures",
        paths.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {records} records disagree:\n{}",
        failures.len(),
        failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
