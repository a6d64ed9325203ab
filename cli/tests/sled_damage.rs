//! Guards the sled backend's failure modes, each measured from outside before rnt worked
//! around it: a half-generated snapshot left by a killed process no longer bricks the
//! store, a truncated or flipped `db` file is exit 3 or an answer (never sled's panic),
//! and a damaged `conf` is corruption (exit 3), not a user error.
//!
//! What rnt cannot fix inside sled, and this test records rather than hides: sled reads a
//! damaged log record as the end of its log, so a flipped or cut `db` can silently roll
//! the store back to an earlier commit (a complete, older state). The pack backend reports
//! the same damage instead (`corruption.rs`); that is one reason packs are the default.

mod common;

use common::Shop;

fn sled_shop() -> Shop {
    let shop = Shop::bare();
    shop.ok(&["init", "--backend", "sled"]);
    shop.write(
        "p.rnt",
        "relation r(x: int).\nview v(x: int).\nv(x) :- r(x), x > 1.\n",
    );
    shop.ok(&["define", "p.rnt"]);
    for round in 0..5 {
        let changes: Vec<String> = (0..50)
            .map(|i| format!("+r({})", round * 100 + i))
            .collect();
        let changes: Vec<&str> = changes.iter().map(String::as_str).collect();
        shop.commit(&format!("round {round}"), &changes);
    }
    shop
}

/// Runs the reading commands; each must succeed or exit 3, without a panic. Returns
/// whether a command answered with something other than the good output (sled's silent
/// rollback to an earlier commit).
fn assert_no_panic(shop: &Shop, good: &[String], context: &str) -> bool {
    let mut rolled_back = false;
    for (args, expected) in reading_commands().iter().zip(good) {
        let run = shop.run(args);
        // A panic that escapes is Rust's hook text and exit 101; sled's own assertion
        // failures are caught and reported as corruption (exit 3) below.
        assert!(
            run.code != 101 && !run.stderr.contains("panicked at"),
            "{context}: {run:?}"
        );
        match run.code {
            0 => rolled_back |= &run.stdout != expected,
            3 => assert!(
                run.stderr.contains("corrupt") || run.stderr.contains("missing from the store"),
                "{context}: {run:?}"
            ),
            _ => panic!("{context}: {args:?} exited {}: {}", run.code, run.stderr),
        }
    }
    if rolled_back {
        // A rollback is to a complete earlier state: it still verifies.
        assert_eq!(shop.run(&["verify"]).code, 0, "{context}");
    }
    rolled_back
}

fn reading_commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["status", "--format", "json"],
        vec!["log", "--format", "json"],
        vec!["show", "v", "--format", "csv"],
        vec!["verify"],
    ]
}

fn good_outputs(shop: &Shop) -> Vec<String> {
    reading_commands()
        .iter()
        .map(|args| shop.ok(args))
        .collect()
}

#[test]
fn a_half_generated_snapshot_does_not_brick_the_store() {
    let shop = sled_shop();
    let good = good_outputs(&shop);
    let stale = shop.store().join("snap.00000000000DEAD0.generating");
    std::fs::write(&stale, b"half a snapshot").unwrap();
    assert_eq!(good_outputs(&shop), good);
    assert!(!stale.exists());
}

#[test]
fn a_truncated_or_flipped_db_is_exit_3_never_a_panic() {
    let pristine = sled_shop();
    let good = good_outputs(&pristine);
    let db = std::fs::read(pristine.store().join("db")).unwrap();
    let cuts = [0, 1, 100, 4096, db.len() / 3, db.len() / 2, db.len() - 1];
    for (case, cut) in cuts.iter().enumerate() {
        let shop = sled_shop();
        std::fs::write(shop.store().join("db"), &db[..*cut]).unwrap();
        let rolled_back = assert_no_panic(&shop, &good, &format!("db cut to {cut} (case {case})"));
        eprintln!("db cut to {cut} bytes: rolled back silently: {rolled_back}");
    }
    for at in [20, db.len() / 4, db.len() / 2, db.len() - 10] {
        let shop = sled_shop();
        let mut bytes = std::fs::read(shop.store().join("db")).unwrap();
        bytes[at] ^= 0x40;
        std::fs::write(shop.store().join("db"), &bytes).unwrap();
        let rolled_back = assert_no_panic(&shop, &good, &format!("db byte {at} flipped"));
        eprintln!("db byte {at} flipped: rolled back silently: {rolled_back}");
    }
}

#[test]
fn a_damaged_conf_is_corruption() {
    let shop = sled_shop();
    std::fs::write(
        shop.store().join("conf"),
        b"this is not sled's configuration at all",
    )
    .unwrap();
    let err = shop.fails(&["status"], 3);
    assert!(err.contains("corrupt"), "{err}");
}
