//! Fuzzes rnt's SQL: statements of the corpus (`tests/sql/*.slt`), cut, spliced, doubled,
//! stripped of a span or sprinkled with SQL's punctuation and keywords, run through a
//! session over the corpus's own tables and data. Whatever the text, the session answers
//! or refuses it: no panic, a refusal carries a message, and a refused single statement
//! leaves HEAD where it was (nothing half committed).
//!
//! Statements holding `RECURSIVE` are not mutated: a recursion whose bound a mutation cuts
//! away diverges, as it does in SQL (it runs until the memory budget stops it).
//!
//! `RNT_SQL_FUZZ=N` runs N mutated statements (default 400; 20,000 were run once, see
//! docs/sql.md); `RNT_SQL_FUZZ_SEED` picks the seed.

#[path = "../../../tests/common/rng.rs"]
mod rng;

use rng::Rng;
use rnt_db::Database;
use rnt_sql_run::Session;
use rnt_store::MemoryStore;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

/// Tokens a mutation may insert: the punctuation and keywords SQL text is made of.
const SPRINKLES: [&str; 24] = [
    "(",
    ")",
    ",",
    ";",
    "'",
    "\"",
    "*",
    "-",
    "/",
    "::",
    " NULL ",
    " 0 ",
    " -1 ",
    " 99999999999999999999 ",
    " 1.5 ",
    " SELECT ",
    " FROM ",
    " WHERE ",
    " GROUP BY ",
    " OVER () ",
    " JOIN ",
    " ON ",
    " AS ",
    "\u{e9}",
];

/// Every statement of the corpus, with its file, in order.
fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sql");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/sql exists")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    paths.sort();
    let mut statements = Vec::new();
    for path in paths {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("the file reads");
        for block in text.split("\n\n") {
            let mut lines = block.lines().skip_while(|l| l.starts_with('#'));
            let Some(header) = lines.next() else { continue };
            if !(header.starts_with("statement") || header.starts_with("query")) {
                continue;
            }
            let sql: Vec<&str> = lines.take_while(|l| *l != "----").collect();
            if !sql.is_empty() {
                statements.push((name.clone(), sql.join("\n")));
            }
        }
    }
    statements
}

/// A session over every table of the corpus: each file's `CREATE TABLE` and `INSERT`
/// statements that succeed, in order (later files' tables of the same name are skipped).
fn seeded(db: &Database, statements: &[(String, String)]) -> usize {
    let mut session = Session::new(db);
    let mut made = 0;
    for (_, sql) in statements {
        let upper = sql.trim_start().to_uppercase();
        if (upper.starts_with("CREATE TABLE") || upper.starts_with("INSERT"))
            && session.run(sql).is_ok()
        {
            made += 1;
        }
    }
    made
}

/// A char boundary of `text` at or before `at`.
fn boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// Two char boundaries of `text`, in order.
fn span(rng: &mut Rng, text: &str) -> (usize, usize) {
    let a = boundary(text, rng.index(text.len() + 1));
    let b = boundary(text, rng.index(text.len() + 1));
    (a.min(b), a.max(b))
}

/// `text` changed by one to three random edits; `other` is another statement to splice
/// from.
fn mutate(rng: &mut Rng, text: &str, other: &str) -> String {
    let mut out = text.to_string();
    for _ in 0..1 + rng.below(3) {
        let (a, b) = span(rng, &out);
        out = match rng.below(6) {
            0 => out[..a].to_string(),
            1 => format!("{}{}", &out[..a], &out[b..]),
            2 => format!("{}{}{}", &out[..b], &out[a..b], &out[b..]),
            3 => {
                let (c, d) = span(rng, other);
                format!("{}{}{}", &out[..a], &other[c..d], &out[b..])
            }
            4 => {
                let sprinkle = SPRINKLES[rng.index(SPRINKLES.len())];
                format!("{}{sprinkle}{}", &out[..a], &out[a..])
            }
            _ => format!("{}{}", &out[a..b], &out[..a]),
        };
    }
    out
}

#[test]
fn mutated_statements_are_answered_or_refused_without_a_trace() {
    let runs: u64 = std::env::var("RNT_SQL_FUZZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let seed: u64 = std::env::var("RNT_SQL_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_5017);
    let statements: Vec<(String, String)> = corpus()
        .into_iter()
        .filter(|(_, sql)| !sql.to_uppercase().contains("RECURSIVE"))
        .collect();
    assert!(statements.len() > 1000, "the corpus has its statements");
    let db = Database::new(Arc::new(MemoryStore::new()));
    assert!(
        seeded(&db, &statements) > 20,
        "the corpus's tables are made"
    );
    let mut rng = Rng(seed);
    let (mut answered, mut refused) = (0u64, 0u64);
    for run in 0..runs {
        let (file, text) = &statements[rng.index(statements.len())];
        let (_, other) = &statements[rng.index(statements.len())];
        let sql = mutate(&mut rng, text, other);
        let before = db.head_commit().expect("the head reads");
        let mut session = Session::new(&db);
        let result = catch_unwind(AssertUnwindSafe(|| session.run(&sql)));
        let result = result
            .unwrap_or_else(|_| panic!("run {run} (seed {seed}, from {file}) panicked on:\n{sql}"));
        match result {
            Ok(_) => answered += 1,
            Err((done, error)) => {
                refused += 1;
                assert!(
                    !error.message.trim().is_empty(),
                    "run {run}: a refusal without a message for:\n{sql}"
                );
                if done.is_empty() {
                    let after = db.head_commit().expect("the head reads");
                    assert_eq!(
                        before, after,
                        "run {run} (seed {seed}): a refused statement moved HEAD:\n{sql}\n{error}"
                    );
                }
            }
        }
    }
    eprintln!("{runs} mutated statements: {answered} answered, {refused} refused");
    assert!(refused > 0, "mutations make bad SQL");
}

/// Statements the fuzzing once found panicking, each now answered or refused with a
/// message: `count(NULL)` left its argument's variable with no type, and the checker
/// assumed every variable of an error-free rule had one.
#[test]
fn statements_that_once_panicked_are_refused_with_a_message() {
    let db = Database::new(Arc::new(MemoryStore::new()));
    for sql in ["SELECT count( NULL)", "SELECT sum(NULL), min(NULL)"] {
        let mut session = Session::new(&db);
        let result = catch_unwind(AssertUnwindSafe(|| session.run(sql)))
            .unwrap_or_else(|_| panic!("`{sql}` panicked"));
        if let Err((_, error)) = result {
            assert!(error.message.contains("type"), "`{sql}`: {error}");
        }
    }
}
