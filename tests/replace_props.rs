//! Guards `import --replace` into a relation without a key against a model: whatever order
//! the rows come in — sorted (streamed straight into the new tree), sorted then not (the
//! rest applied as edits), shuffled — and whatever duplicates they hold, the replace gives
//! the state hash of the same contents committed as one change set on a fresh store, the
//! views stay verified, and the change counts are the set difference.

mod common;

use proptest::prelude::*;
use rnt::db::change::parse_changes;
use rnt::db::{CommitOutcome, Database, Value};
use rnt::store::MemoryStore;
use std::collections::BTreeSet;
use std::sync::Arc;

/// `orders` has no key; a join and an aggregate read it, so a replace is maintained (in
/// steps when the test makes steps small).
const PROGRAM: &str = "\
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
";

type Row = (i64, i64, i64);

fn row() -> impl Strategy<Value = Row> {
    (0i64..40, 0i64..4, -3i64..4)
}

/// How the file orders its rows.
#[derive(Clone, Copy, Debug)]
enum Order {
    /// Sorted, duplicates adjacent.
    Sorted,
    /// Sorted up to `at`, then the rest reversed.
    SortedThenReversed(usize),
    /// As drawn.
    AsDrawn,
}

fn order() -> impl Strategy<Value = Order> {
    prop_oneof![
        Just(Order::Sorted),
        (0usize..60).prop_map(Order::SortedThenReversed),
        Just(Order::AsDrawn),
    ]
}

fn arrange(rows: &[Row], order: Order) -> Vec<Row> {
    let mut sorted = rows.to_vec();
    sorted.sort_unstable();
    match order {
        Order::Sorted => sorted,
        Order::SortedThenReversed(at) => {
            let at = at.min(sorted.len());
            sorted[at..].reverse();
            sorted
        }
        Order::AsDrawn => rows.to_vec(),
    }
}

fn database(step_rows: usize) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(step_rows);
    db.define(PROGRAM, "program.rnt", "define").unwrap();
    let customers = "+customers(0, \"free\")\n+customers(1, \"pro\")\n+customers(2, \"team\")";
    commit(&db, customers);
    db
}

fn commit(db: &Database, text: &str) {
    let changes = parse_changes(text, None).unwrap();
    db.commit(changes, "changes", None).unwrap();
}

fn orders_text(rows: &BTreeSet<Row>) -> String {
    rows.iter()
        .map(|(i, c, a)| format!("+orders({i}, {c}, {a})"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tuple((i, c, a): Row) -> Vec<Value> {
    vec![Value::Int(i), Value::Int(c), Value::Int(a)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn a_replace_in_any_row_order_gives_the_state_of_its_set(
        before in prop::collection::vec(row(), 0..50),
        file in prop::collection::vec(row(), 0..60),
        order in order(),
        step_rows in prop_oneof![Just(usize::MAX), 1usize..8],
    ) {
        let db = database(step_rows);
        let before: BTreeSet<Row> = before.into_iter().collect();
        if !before.is_empty() {
            commit(&db, &orders_text(&before));
        }
        let rows = arrange(&file, order);
        let outcome = db
            .import_replace("orders", rows.iter().map(|&r| Ok(tuple(r))), "replace", &mut |_| {})
            .unwrap();
        let after: BTreeSet<Row> = file.iter().copied().collect();
        let inserted = after.difference(&before).count() as u64;
        let deleted = before.difference(&after).count() as u64;
        match outcome {
            CommitOutcome::NothingToCommit => prop_assert_eq!((inserted, deleted), (0, 0)),
            CommitOutcome::Committed { changes, .. } => {
                prop_assert_eq!(changes.len(), 1);
                prop_assert_eq!((changes[0].inserted, changes[0].deleted), (inserted, deleted));
            }
        }
        let fresh = database(usize::MAX);
        if !after.is_empty() {
            commit(&fresh, &orders_text(&after));
        }
        prop_assert_eq!(
            db.head().unwrap().state_address,
            fresh.head().unwrap().state_address
        );
        let head = db.head().unwrap();
        prop_assert!(db.verify(&head).unwrap().mismatches.is_empty());
    }
}
