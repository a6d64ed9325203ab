//! `--threads N` (and `RNT_THREADS`): how many threads a commit maintains views that do
//! not read each other on. The same changes reach the same state at any count, through
//! every command that commits; a count that is not one is refused before anything runs.

mod common;

use common::Shop;

/// Independent views of several operators and a denial, so that a commit's first wave
/// holds more strata than one thread.
const PROGRAM: &str = "\
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
view biggest(customer: int, amount: int).
biggest(c, max(a)) :- orders(_, c, a).
view top(customer: int, id: int, k: int).
top(c, i, k) :- orders(i, c, a), k = row_number() over (partition c order a desc), k <= 2.
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

/// Defines the program, imports some rows and commits a change, at `threads`; returns
/// the state hash.
fn history(threads: &str) -> String {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["--threads", threads, "define", "p.rnt"]);
    let mut orders = String::from("id,customer,amount\n");
    for i in 0..300 {
        orders.push_str(&format!("{i},{},{}\n", i % 7, (i * 37) % 101));
    }
    shop.write("orders.csv", &orders);
    shop.write(
        "customers.csv",
        "id,plan\n0,free\n1,pro\n2,pro\n3,team\n4,free\n5,team\n6,basic\n",
    );
    shop.ok(&["--threads", threads, "import", "customers", "customers.csv"]);
    shop.ok(&["--threads", threads, "import", "orders", "orders.csv"]);
    // The option after the command, and changes that look like options' values.
    shop.ok(&[
        "commit",
        "-m",
        "tick",
        "--threads",
        threads,
        "-orders(3, 3, 9)",
        "+orders(3, 3, 10)",
        "+orders(900, 6, 1)",
    ]);
    shop.ok(&[
        "sql",
        "--threads",
        threads,
        "UPDATE orders SET amount = amount + 1 WHERE customer = 2",
    ]);
    let refused = shop.fails(
        &[
            "--threads",
            threads,
            "commit",
            "-m",
            "orphan",
            "+orders(901, 99, 1)",
        ],
        2,
    );
    assert!(refused.contains("orphan"), "{refused}");
    shop.ok(&["verify"]);
    shop.state()
}

#[test]
fn the_same_history_reaches_the_same_state_at_any_thread_count() {
    let serial = history("1");
    assert_eq!(history("2"), serial);
    assert_eq!(history("4"), serial);
}

#[test]
fn a_thread_count_that_is_not_one_is_refused() {
    let shop = Shop::defined();
    let head = shop.head();
    let zero = shop.fails(
        &["--threads", "0", "commit", "-m", "x", "+orders(1, 1, 1)"],
        1,
    );
    assert!(
        zero.contains("--threads") && zero.contains("1..=1024"),
        "{zero}"
    );
    let run = shop
        .command(&["commit", "-m", "x", "+orders(1, 1, 1)"])
        .env("RNT_THREADS", "many")
        .output()
        .expect("rnt runs");
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("RNT_THREADS") && stderr.contains("many"),
        "{stderr}"
    );
    assert_eq!(shop.head(), head, "nothing was committed");
    let two = shop
        .command(&["commit", "-m", "x", "+orders(1, 1, 1)"])
        .env("RNT_THREADS", "2")
        .output()
        .expect("rnt runs");
    assert!(
        two.status.success(),
        "{}",
        String::from_utf8_lossy(&two.stderr)
    );
}
