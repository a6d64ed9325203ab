//! Guards two processes on one store: while a long import holds the writer lock, a reader
//! answers at once at the last committed state, and a second writer waits and then
//! succeeds, or gives up with the clear "in use" message — and the store is never damaged
//! either way.

mod common;

use common::{assert_one_line_error, Shop};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Rows in the import that keeps the store busy: long enough (about a second or more in
/// a test build) to overlap the second command.
const IMPORT_ROWS: u64 = 400_000;

fn big_csv(shop: &Shop) {
    let mut text =
        String::with_capacity(usize::try_from(IMPORT_ROWS).expect("a row count fits usize") * 20);
    text.push_str("id,customer,amount\n");
    for i in 0..IMPORT_ROWS {
        let _ = writeln!(text, "{i},{},{}", i % 1000, i * 7 % 10_000);
    }
    shop.write("big.csv", &text);
}

#[test]
fn a_second_command_waits_or_fails_cleanly() {
    let shop = Shop::defined();
    big_csv(&shop);
    let mut import = shop.spawn(&["import", "orders", "big.csv"]);
    // Let the import open the store first.
    std::thread::sleep(Duration::from_millis(150));

    // A reader takes no lock: even with no patience it answers at once, at the last
    // committed state (no orders while the import is still running).
    let reader = shop
        .command(&["status", "--format", "json"])
        .env("RNT_LOCK_WAIT_MS", "0")
        .output()
        .unwrap();
    let import_was_running = import.try_wait().unwrap().is_none();
    assert!(reader.status.success(), "{reader:?}");
    let seen: serde_json::Value = serde_json::from_slice(&reader.stdout).unwrap();
    let orders_seen = seen["relations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "orders")
        .unwrap()["count"]
        .as_u64()
        .unwrap();
    assert!(
        orders_seen == 0 || orders_seen == IMPORT_ROWS,
        "a reader saw a partial import: {orders_seen} orders"
    );
    if import_was_running {
        assert_eq!(orders_seen, 0, "a reader saw an import before it finished");
    }

    // With the default patience: wait, then commit on top of the import (or time out
    // with the same message if the import outlasts the wait).
    let started = Instant::now();
    let second = shop.run(&["commit", "-m", "during import", "+customers(1, \"pro\")"]);
    let waited = started.elapsed();
    let import = import.wait_with_output().unwrap();
    assert!(
        import.status.success(),
        "import failed: {}",
        String::from_utf8_lossy(&import.stderr)
    );
    let committed_second = match second.code {
        0 => {
            assert!(second.stdout.starts_with("committed "), "{second:?}");
            true
        }
        1 => {
            assert_one_line_error(&second.stderr, &["in use by another process", "try again"]);
            false
        }
        _ => panic!("unexpected exit: {second:?} after {waited:?}"),
    };
    eprintln!(
        "status beside the import: saw {orders_seen} orders (import running: {import_was_running}); \
         commit with waiting: exit {} after {waited:.1?}",
        second.code
    );

    // The store is whole: it opens, HEAD is a complete commit, both commits are there.
    let status = shop.status();
    let relations = status["relations"].as_array().unwrap();
    let count = |name: &str| relations.iter().find(|r| r["name"] == name).unwrap()["count"].clone();
    assert_eq!(count("orders"), serde_json::json!(IMPORT_ROWS));
    let log = shop.log();
    let messages: Vec<&str> = log.iter().map(|c| c["message"].as_str().unwrap()).collect();
    if committed_second {
        assert_eq!(
            messages,
            [
                "during import",
                "import orders from big.csv",
                "define shop.rnt"
            ]
        );
        assert_eq!(count("customers"), serde_json::json!(1));
    } else {
        assert_eq!(messages, ["import orders from big.csv", "define shop.rnt"]);
    }
    assert_eq!(shop.rows("orders", None).len() as u64, IMPORT_ROWS);
    assert_eq!(
        shop.ok(&["verify"]),
        "verified: no materialized views to check\n"
    );
}

#[test]
fn concurrent_commits_all_land() {
    let shop = Shop::defined();
    let children: Vec<_> = (0..6)
        .map(|i| {
            shop.spawn(&[
                "commit",
                "-m",
                &format!("writer {i}"),
                &format!("+orders({i}, {i}, {i})"),
            ])
        })
        .collect();
    let mut committed = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => committed += 1,
            Some(1) => assert!(stderr.contains("in use by another process"), "{stderr}"),
            other => panic!("exit {other:?}: {stderr}"),
        }
    }
    // Each process waits for the store, so normally every one commits.
    assert_eq!(shop.log().len(), 1 + committed);
    assert_eq!(shop.rows("orders", None).len(), committed);
}
