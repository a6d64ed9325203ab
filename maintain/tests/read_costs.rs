//! Guards the cost model through the node store's counters: binding-aware reads probe the
//! matching tuples, not the relation; and reads per commit follow the operator table of
//! seed 001 (a filter or projection reads nothing beyond its delta, a join reads the other
//! side's tuples under the touched keys, SUM/COUNT reads one accumulator per touched group).

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

use rnt_maintain::change::parse_changes;
use rnt_maintain::{CommitOutcome, Database, Value};
use rnt_merkle::OperatorStat;
use rnt_store::MemoryStore;
use std::sync::Arc;

fn commit(db: &Database, text: &str) -> Vec<OperatorStat> {
    match db
        .commit(parse_changes(text, None).expect("parse"), "test")
        .expect("commit")
    {
        CommitOutcome::Committed { stats, .. } => stats,
        CommitOutcome::NothingToCommit => panic!("nothing to commit"),
    }
}

fn stat<'a>(stats: &'a [OperatorStat], relation: &str) -> &'a OperatorStat {
    stats
        .iter()
        .find(|s| s.relation == relation)
        .unwrap_or_else(|| panic!("no stat for {relation}: {stats:?}"))
}

fn import(db: &Database, relation: &str, rows: impl Iterator<Item = Vec<Value>>) {
    db.import(relation, rows.map(Ok), "import", &mut |_| {})
        .expect("import");
}

#[test]
fn a_join_probing_a_million_tuples_reads_the_matches() {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(
        "relation big(k: int, v: int).\nrelation probe(x: int).\nview hit(x: int, v: int).\nhit(x, v) :- probe(x), big(x, v).",
        "p.rnt",
        "define",
    )
    .unwrap();
    import(
        &db,
        "big",
        (0..1_000_000i64).map(|i| vec![Value::Int(i / 2), Value::Int(i)]),
    );
    let stats = commit(&db, "+probe(4242)\n+probe(777)");
    let join = stat(&stats, "hit");
    assert_eq!(join.operator, "counting");
    // Two probes, two matches each; a handful of reads at most, not a million.
    assert!(join.entries_read <= 16, "{join:?}");
    let head = db.head().unwrap();
    let rows = db.tuples(&head, "hit").unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0], vec![Value::Int(777), Value::Int(1554)]);
}

fn orders_db() -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(
        r#"
        relation orders(id: int, customer: int, amount: int).
        relation customers(id: int, plan: str).
        view plan_total(plan: str, total: int, n: int).
        view order_plan(id: int, plan: str).
        view big_order(id: int).
        view buyer(c: int).
        plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
        order_plan(i, p) :- orders(i, c, _), customers(c, p).
        big_order(i) :- orders(i, _, a), a > 900.
        buyer(c) :- orders(_, c, _).
        "#,
        "p.rnt",
        "define",
    )
    .unwrap();
    let plans = ["free", "pro", "team", "enterprise"];
    import(
        &db,
        "customers",
        (0..1_000i64).map(|c| vec![Value::Int(c), Value::Str(plans[(c % 4) as usize].into())]),
    );
    import(
        &db,
        "orders",
        (0..20_000i64).map(|i| vec![Value::Int(i), Value::Int(i % 1_000), Value::Int(i % 1_000)]),
    );
    db
}

#[test]
fn sum_and_count_read_one_accumulator_per_touched_group() {
    let db = orders_db();
    // Three changed orders of customers 1 and 5 (plan "pro"), one of customer 2 ("team").
    let stats = commit(
        &db,
        "-orders(1, 1, 1)\n+orders(1, 1, 950)\n+orders(30001, 5, 10)\n+orders(30002, 2, 20)",
    );
    let aggregate = stat(&stats, "plan_total");
    assert_eq!(aggregate.operator, "aggregate");
    // Per changed order: the customer under its key (the match and the next key); per
    // touched group (2): its accumulator. Nothing proportional to the 20k orders.
    assert!(aggregate.entries_read <= 4 * 2 + 2, "{aggregate:?}");
    let join = stat(&stats, "order_plan");
    assert!(join.entries_read <= 4 * 2 + 4, "{join:?}");
}

#[test]
fn filters_and_projections_read_nothing_beyond_the_delta() {
    let db = orders_db();
    let stats = commit(
        &db,
        "+orders(40000, 3, 999)\n+orders(40001, 3, 5)\n-orders(7, 7, 7)",
    );
    // Each reads at most its own stored count per changed output tuple.
    assert!(stat(&stats, "big_order").entries_read <= 1, "{stats:?}");
    assert!(stat(&stats, "buyer").entries_read <= 2, "{stats:?}");
}

/// An upsert and a delete by key read the current tuple of their key through the tuple tree
/// (the key leads) or the key's index (it does not): O(log n) nodes, however large the
/// relation.
#[test]
fn an_upsert_into_a_large_keyed_relation_reads_a_path_not_the_relation() {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(
        "relation plans(id: int, plan: str) key(id).\nrelation tags(name: str, id: int) key(id).\n",
        "p.rnt",
        "define",
    )
    .unwrap();
    const ROWS: i64 = 300_000;
    import(
        &db,
        "plans",
        (0..ROWS).map(|i| vec![Value::Int(i), Value::Str(format!("plan{}", i % 7))]),
    );
    import(
        &db,
        "tags",
        (0..ROWS).map(|i| vec![Value::Str(format!("tag{}", i % 13)), Value::Int(i)]),
    );
    let depth = {
        let head = db.head().unwrap();
        let tree = head.tree("tags").unwrap();
        u64::from(tree.depth(db.nodes()).unwrap())
    };
    for (text, deleted) in [
        ("+plans(150000, \"gold\")\n+tags(\"gold\", 150001)", 2),
        ("-plans(77, _)\n-tags(_, 78)", 2),
    ] {
        let stats = commit(&db, text);
        let base = stat(&stats, "plans,tags");
        // Per relation: the read by key (a path), the edit and the diff (a path or two
        // each), the index's edit: a few paths of `depth` nodes, not 300,000 tuples. The
        // diff compares the changed leaves entry by entry (a few hundred entries a leaf).
        assert!(base.nodes_read <= 24 * depth, "depth {depth}: {base:?}");
        assert!(base.entries_read <= 4_000, "{base:?}");
        let head = db.head().unwrap();
        let changes = db
            .log()
            .unwrap()
            .first()
            .map(|(_, c)| c.changes.clone())
            .unwrap();
        assert_eq!(
            changes.iter().map(|c| c.deleted).sum::<u64>(),
            deleted,
            "{changes:?}"
        );
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
    }
    let head = db.head().unwrap();
    assert_eq!(
        db.tuple_with_key(&head, "tags", &[Value::Int(150_001)])
            .unwrap(),
        Some(vec![Value::Str("gold".into()), Value::Int(150_001)])
    );
}
