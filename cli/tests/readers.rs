//! Guards "readers never wait": while a writer process holds the writer lock in the middle
//! of a commit (paused after writing its chunks, before its manifest replaces the old one),
//! `status`, `log`, `show`, `query`, `diff` and `verify` from other processes answer at
//! once, at the old head; a second writer waits for the first and then lands on top of it.

mod common;

use common::Shop;
use rnt_store::fault::PAUSE_ENV;
use std::time::{Duration, Instant};

/// How long the first writer stays paused mid-commit: far longer than any reader needs.
const PAUSE_MS: u64 = 6_000;

#[test]
#[cfg_attr(
    not(feature = "fault-injection"),
    ignore = "needs fault points: build with `--features rnt-cli/fault-injection` (scripts/test does)"
)]
fn readers_answer_at_the_old_head_while_a_writer_is_mid_commit() {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation r(x: int).\nview double(x: int, y: int).\ndouble(x, y) :- r(x), y = x * 2.\n",
    );
    shop.ok(&["define", "p.rnt"]);
    shop.commit("first", &["+r(1)", "+r(2)"]);
    let old_head = shop.head().unwrap();
    let old_show = shop.ok(&["show", "double", "--format", "csv"]);

    let mut writer = shop
        .command(&["commit", "-m", "paused", "+r(3)"])
        .env(PAUSE_ENV, format!("manifest-write:1:{PAUSE_MS}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the writer is inside its commit: its temporary manifest exists.
    let started = Instant::now();
    while !std::fs::read_dir(shop.store()).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("manifest.tmp-")
    }) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the writer never got there"
        );
        assert!(
            writer.try_wait().unwrap().is_none(),
            "the writer ended early"
        );
        std::thread::sleep(Duration::from_millis(10));
    }

    // A second writer, started now, must wait for the first.
    let second = shop
        .command(&["commit", "-m", "second", "+r(4)"])
        .env("RNT_LOCK_WAIT_MS", "60000")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    let readers_started = Instant::now();
    assert_eq!(shop.head().unwrap(), old_head);
    assert_eq!(shop.log()[0]["commit"], serde_json::json!(old_head));
    assert_eq!(shop.ok(&["show", "double", "--format", "csv"]), old_show);
    assert_eq!(
        shop.ok(&["query", "q(x) :- r(x).", "--format", "csv"]),
        "x\n1\n2\n"
    );
    assert_eq!(shop.ok(&["diff", "HEAD~1", "HEAD"]), "+r(1)\n+r(2)\n");
    shop.ok(&["verify"]);
    let readers_took = readers_started.elapsed();
    assert!(
        writer.try_wait().unwrap().is_none(),
        "the writer finished before the readers did: they may have waited ({readers_took:?})"
    );
    eprintln!("six reader commands took {readers_took:?} beside a paused writer");

    let first = writer.wait_with_output().unwrap();
    assert!(first.status.success(), "{first:?}");
    let second = second.wait_with_output().unwrap();
    assert!(second.status.success(), "{second:?}");
    let log = shop.log();
    let messages: Vec<&str> = log.iter().map(|c| c["message"].as_str().unwrap()).collect();
    assert_eq!(messages, ["second", "paused", "first", "define p.rnt"]);
    assert_eq!(
        shop.ok(&["show", "double", "--format", "csv"]),
        "x,y\n1,2\n2,4\n3,6\n4,8\n"
    );
    shop.ok(&["verify"]);
}
