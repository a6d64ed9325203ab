//! Guards what `why` reads (issue 26): a derivation's inputs, not the relation. A join view
//! of a million tuples and one of ten thousand, built alike: explaining a tuple — its rule
//! instance found with the head's columns bound, and the commit that wrote each base tuple
//! — reads the same handful of entries at both sizes, and the nodes of a few root-to-leaf
//! paths (more levels at the larger size, never more nodes than the paths hold). So does
//! a tuple of a recursive view over a chain (a shortest derivation) and a top-k row (its
//! partition's rows). The measured numbers are in docs/bench-history.md ("`rnt why`").

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

use rnt_db::{Database, Value};
use rnt_merkle::Counters;
use rnt_store::MemoryStore;
use std::sync::Arc;

const PROGRAM: &str = "
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view top2(customer: int, id: int, k: int).
top2(c, i, k) :- orders(i, c, a), k = row_number() over (partition c order a desc), k <= 2.
relation edge(src: int, dst: int).
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
";

/// Customers per order count: each has ten orders.
const ORDERS_PER_CUSTOMER: i64 = 10;

/// A store with `orders` orders over `orders / 10` customers, imported in three commits
/// (customers, orders, a chain of 20 edges) after the define.
fn shop(orders: i64) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(PROGRAM, "p.rnt", "define").expect("define");
    let plans = ["free", "pro", "team"];
    let customers = orders / ORDERS_PER_CUSTOMER;
    let rows = (0..customers).map(|c| {
        Ok(vec![
            Value::Int(c),
            Value::Str(plans[(c % 3) as usize].into()),
        ])
    });
    db.import("customers", rows, "customers", &mut |_| {})
        .expect("import customers");
    let rows = (0..orders).map(|i| {
        Ok(vec![
            Value::Int(i),
            Value::Int(i % customers),
            Value::Int(i % 997),
        ])
    });
    db.import("orders", rows, "orders", &mut |_| {})
        .expect("import orders");
    let rows = (0..20).map(|i| Ok(vec![Value::Int(i), Value::Int(i + 1)]));
    db.import("edge", rows, "edges", &mut |_| {})
        .expect("import edges");
    db
}

/// The reads of `why` of `tuple` (with each base tuple's commit).
fn why_reads(db: &Database, tuple: &str) -> Counters {
    let head = db.head().expect("head");
    let before = db.nodes().counters();
    let explained = db.why(&head, tuple, 10).expect("why");
    assert!(
        !explained.writers.is_empty(),
        "{tuple}: base tuples with their commits"
    );
    db.nodes().counters() - before
}

#[test]
fn why_reads_the_derivations_inputs_at_ten_thousand_and_a_million() {
    let mut measured = Vec::new();
    for orders in [10_000i64, 1_000_000] {
        let db = shop(orders);
        let head = db.head().expect("head");
        assert_eq!(
            head.entry("order_plan").and_then(|e| e.count),
            Some(orders as u64)
        );
        let id = orders / 2 + 7;
        let customer = id % (orders / ORDERS_PER_CUSTOMER);
        let plan = ["free", "pro", "team"][(customer % 3) as usize];
        let join = why_reads(&db, &format!("order_plan({id}, \"{plan}\")"));
        let recursive = why_reads(&db, "reach(0, 20)");
        let top = why_reads(
            &db,
            &format!("top2({customer}, {}, 1)", top_order(orders, customer)),
        );
        eprintln!("orders {orders}: join {join:?}\n  recursive {recursive:?}\n  top-k {top:?}");
        measured.push((join, recursive, top));
    }
    let (small, large) = (&measured[0], &measured[1]);
    // The join: the order by id and its customer by id, each a point read, and each base
    // tuple's commit (a point read in the commits whose tree differs).
    assert_eq!(
        small.0.entries_read, large.0.entries_read,
        "{small:?} {large:?}"
    );
    assert!(large.0.entries_read <= 16, "{large:?}");
    // Nodes: a few root-to-leaf paths (a level or two more at a million), not the relation.
    assert!(
        large.0.nodes_read <= small.0.nodes_read + 3 * 4,
        "{small:?} {large:?}"
    );
    // The chain's shortest derivation (height 20, found by deepening: about 20²/2 steps,
    // each a lookup by index) reads the same at both sizes: the orders do not matter to it.
    assert_eq!(
        small.1.entries_read, large.1.entries_read,
        "{small:?} {large:?}"
    );
    // A top-k row reads its partition (ten orders), at both sizes.
    assert_eq!(
        small.2.entries_read, large.2.entries_read,
        "{small:?} {large:?}"
    );
    assert!(
        large.2.entries_read <= 4 * ORDERS_PER_CUSTOMER as u64 + 16,
        "{large:?}"
    );
}

/// The id of the customer's order with the greatest amount (the first of its top 2).
fn top_order(orders: i64, customer: i64) -> i64 {
    let customers = orders / ORDERS_PER_CUSTOMER;
    (0..ORDERS_PER_CUSTOMER)
        .map(|n| customer + n * customers)
        .max_by_key(|&i| (i % 997, -i))
        .expect("ten orders")
}
