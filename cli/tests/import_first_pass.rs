//! `rnt import` parses and checks every row before it touches a tree (DESIGN.md, "Import"):
//! a bad field at line 290,001 of a large file is reported with its line, column and value
//! after the parse alone, and the store's files are exactly as they were. The time to that
//! error is printed (`--nocapture`), not asserted. Standard input is read twice too: through
//! a temporary copy.

mod common;

use common::Shop;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

const PROGRAM: &str = "relation readings(id: int, value: decimal(6, 1)?, at: timestamp) key(id).\n\
                       view total(n: int, s: decimal(38, 1)?).\n\
                       total(count(), sum(v)) :- readings(value: v).\n";

/// `rows` rows of readings, the one at `bad_line` (the header is line 1) holding `x` for
/// its value.
fn readings(rows: usize, bad_line: Option<usize>) -> String {
    let mut text = String::from("id,value,at\n");
    for id in 1..=rows {
        let line = id + 1;
        let value = if Some(line) == bad_line {
            "x".to_string()
        } else if id % 7 == 0 {
            String::new()
        } else {
            format!("{}.{}", id % 1000, id % 10)
        };
        let _ = writeln!(text, "{id},{value},2013-01-01T{:02}:00:00Z", id % 24);
    }
    text
}

/// Every file under `dir` with its size.
fn files(dir: &Path) -> BTreeMap<String, u64> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).expect("read the store") {
            let entry = entry.expect("entry");
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                found.insert(path.to_string_lossy().into_owned(), size);
            }
        }
    }
    found
}

#[test]
fn a_bad_field_deep_in_a_large_file_is_reported_before_any_tree_is_written() {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    let file = shop.write("big.csv", &readings(300_000, Some(290_001)));
    let before = files(&shop.store());
    let state = shop.state();
    let started = Instant::now();
    let stderr = shop.fails(&["import", "readings", &file.to_string_lossy()], 1);
    let elapsed = started.elapsed();
    common::assert_one_line_error(
        &stderr,
        &[
            "big.csv, line 290001, column value",
            "expected a decimal, found `x`",
        ],
    );
    assert_eq!(files(&shop.store()), before, "no file of the store changed");
    assert_eq!(shop.state(), state);
    eprintln!("time to the error at line 290,001 of 300,000 rows: {elapsed:?}");
}

#[test]
fn standard_input_is_checked_then_imported() {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    let bad = shop.run_with_stdin(&["import", "readings", "-"], &readings(1000, Some(901)));
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    common::assert_one_line_error(&bad.stderr, &["standard input, line 901, column value"]);
    let good = shop.run_with_stdin(&["import", "readings", "-"], &readings(1000, None));
    assert_eq!(good.code, 0, "{}", good.stderr);
    let total = shop.rows("total", None);
    // 1000 readings; the value is null for every 7th (142 of them), and the rest sum to
    // the values the file gives: computed here from the same formula.
    let sum: i64 = (1..=1000i64)
        .filter(|id| id % 7 != 0)
        .map(|id| (id % 1000) * 10 + id % 10)
        .sum();
    let expected = format!("{}.{}", sum / 10, sum % 10);
    assert_eq!(
        total,
        vec![vec![serde_json::json!(1000), serde_json::json!(expected)]]
    );
    shop.ok(&["verify"]);
}
