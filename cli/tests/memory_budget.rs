//! Guards the memory budget: work that cannot fit stops with exit 1, a message naming the
//! relation and how far it got, and the store untouched — the head where it was, `verify`
//! still passing, the next command working — instead of growing until it is killed.

mod common;

use common::Shop;
use std::fmt::Write as _;

/// A chain of this many edges has a closure of about n²/2 tuples: far more than the
/// budgets below allow.
const CHAIN_EDGES: i64 = 4_000;

fn chain_shop() -> Shop {
    let shop = Shop::init();
    shop.write("edges.rnt", "relation edge(src: int, dst: int).\n");
    shop.ok(&["define", "edges.rnt"]);
    let mut csv = String::from("src,dst\n");
    for i in 0..CHAIN_EDGES {
        let _ = writeln!(csv, "{i},{}", i + 1);
    }
    shop.write("chain.csv", &csv);
    shop.ok(&["import", "edge", "chain.csv"]);
    shop
}

#[test]
fn a_closure_that_cannot_fit_stops_at_the_budget_and_commits_nothing() {
    let shop = chain_shop();
    let head = shop.head();
    shop.write(
        "reach.rnt",
        "relation edge(src: int, dst: int).\nview reach(x: int, y: int).\nreach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n",
    );
    let err = shop.fails(&["--memory-budget", "48M", "define", "reach.rnt"], 1);
    assert!(err.contains("out of memory budget while"), "{err}");
    assert!(err.contains("reach"), "{err}");
    assert!(err.contains("round"), "{err}");
    assert!(err.contains("the budget is 48 MiB"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(shop.head(), head, "nothing was committed");
    shop.ok(&["verify"]);
    // The same budget from the environment.
    let run = shop
        .command(&["define", "reach.rnt"])
        .env("RNT_MEMORY_BUDGET", "48M")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(shop.head(), head);
}

#[test]
fn an_import_over_the_budget_names_the_relation_and_the_rows_read() {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation orders(id: int, customer: int, amount: int).\nview per_customer(c: int, n: int).\nper_customer(c, count()) :- orders(_, c, _).\n",
    );
    shop.ok(&["define", "p.rnt"]);
    let head = shop.head();
    let mut csv = String::from("id,customer,amount\n");
    for i in 0..200_000 {
        let _ = writeln!(csv, "{i},{},{}", i % 1000, i % 77);
    }
    shop.write("orders.csv", &csv);
    let err = shop.fails(
        &["--memory-budget", "8M", "import", "orders", "orders.csv"],
        1,
    );
    assert!(err.contains("out of memory budget while"), "{err}");
    assert!(err.contains("orders"), "{err}");
    assert_eq!(shop.head(), head);
    // With room, the same import lands.
    let out = shop.ok(&["--memory-budget", "1G", "import", "orders", "orders.csv"]);
    assert!(out.starts_with("committed "), "{out}");
    shop.ok(&["verify"]);
}

#[test]
fn a_bad_budget_is_a_clear_error() {
    let shop = Shop::init();
    let err = shop.fails(&["--memory-budget", "lots", "status"], 1);
    assert!(err.contains("`lots` is not a size"), "{err}");
}
