//! Guards history independence end to end: two databases that reach the same contents
//! through different commit histories — other orders, other batchings, insert-then-delete
//! detours, a bulk import, a program written in another layout — report the same state
//! hash (and so the same relation roots).

mod common;

use common::Rng;
use proptest::prelude::*;
use rnt::db::{Change, CommitOutcome, Database, Sign, Value};
use rnt::store::MemoryStore;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The program, as one history writes it.
const PROGRAM: &str = "relation customers(id: int, plan: str).\nrelation orders(id: int, customer: int, amount: int).\n";

/// The same program in another layout and order, with comments: the same canonical form.
const PROGRAM_REWRITTEN: &str = "# orders first this time\nrelation orders(id: int,\n    customer: int, amount: int).   # trailing\n\nrelation   customers(id: int, plan: str).\n";

/// A program with one more relation, defined and dropped again on the way.
const PROGRAM_WIDER: &str = "relation customers(id: int, plan: str).\nrelation orders(id: int, customer: int, amount: int).\nrelation notes(text: str).\n";

/// One tuple of the shop: an order `(id, customer, amount)` or a customer `(id, plan)`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Row {
    Order(i64, i64, i64),
    Customer(i64, String),
}

impl Row {
    fn change(&self, sign: Sign) -> Change {
        let (relation, values) = match self {
            Row::Order(i, c, a) => (
                "orders",
                vec![Value::Int(*i), Value::Int(*c), Value::Int(*a)],
            ),
            Row::Customer(i, p) => ("customers", vec![Value::Int(*i), Value::Str(p.clone())]),
        };
        Change {
            sign,
            relation: relation.to_string(),
            values,
            names: Vec::new(),
            wildcards: Vec::new(),
            line: 1,
            source: None,
        }
    }
}

fn row() -> impl Strategy<Value = Row> {
    prop_oneof![
        4 => (0i64..2_000, -5i64..50, -1_000i64..1_000).prop_map(|(i, c, a)| Row::Order(i, c, a)),
        1 => (0i64..300, prop::sample::select(vec!["free", "pro", "team", ""])).prop_map(|(i, p)| Row::Customer(i, p.to_string())),
    ]
}

/// Commits a random history that ends with exactly `target`: every target row inserted,
/// some of them deleted and inserted again, every detour row inserted and deleted later;
/// operations shuffled (each row's own operations stay in order) and cut into batches at
/// random (a batch never names a row twice). Returns the head's state hash.
fn commit_history(
    db: &Database,
    target: &BTreeSet<Row>,
    detours: &BTreeSet<Row>,
    seed: u64,
) -> rnt_store::Address {
    let mut rng = Rng(seed);
    // Per row, its operations in order.
    let mut queues: Vec<Vec<(Sign, Row)>> = Vec::new();
    for row in target {
        let mut ops = vec![(Sign::Insert, row.clone())];
        if rng.below(4) == 0 {
            ops.extend([(Sign::Delete, row.clone()), (Sign::Insert, row.clone())]);
        }
        queues.push(ops);
    }
    for row in detours.difference(target) {
        queues.push(vec![
            (Sign::Insert, row.clone()),
            (Sign::Delete, row.clone()),
        ]);
    }
    for queue in &mut queues {
        queue.reverse(); // pop from the back = take in order
    }
    let mut batch: Vec<(Sign, Row)> = Vec::new();
    let mut batch_rows: BTreeSet<Row> = BTreeSet::new();
    loop {
        let live: Vec<usize> = (0..queues.len())
            .filter(|&i| !queues[i].is_empty())
            .collect();
        let pick = live.get(rng.index(live.len())).copied();
        let must_cut = pick.is_some_and(|i| batch_rows.contains(&queues[i].last().unwrap().1));
        if pick.is_none() || must_cut || (!batch.is_empty() && rng.below(16) == 0) {
            let changes: Vec<Change> = batch
                .drain(..)
                .map(|(sign, row)| row.change(sign))
                .collect();
            batch_rows.clear();
            match db
                .commit(changes, "step", None)
                .expect("a valid change set commits")
            {
                CommitOutcome::Committed { .. } | CommitOutcome::NothingToCommit => {}
            }
        }
        let Some(i) = pick else { break };
        let op = queues[i].pop().unwrap();
        batch_rows.insert(op.1.clone());
        batch.push(op);
    }
    db.head().unwrap().state_address
}

fn database() -> Database {
    Database::new(Arc::new(MemoryStore::new()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn equal_contents_have_equal_state_hashes(
        target in prop::collection::btree_set(row(), 0..600),
        detours in prop::collection::btree_set(row(), 0..150),
        seeds in (any::<u64>(), any::<u64>()),
    ) {
        // History A: the program as written, then a random history.
        let a = database();
        a.define(PROGRAM, "a.rnt", "define").unwrap();
        let state_a = commit_history(&a, &target, &detours, seeds.0);

        // History B: a wider program first, rows in another history, the program rewritten
        // (dropping the extra, empty relation) at the end.
        let b = database();
        b.define(PROGRAM_WIDER, "b.rnt", "define").unwrap();
        commit_history(&b, &target, &detours, seeds.1);
        b.define(PROGRAM_REWRITTEN, "b2.rnt", "narrow").unwrap();
        let state_b = b.head().unwrap().state_address;
        prop_assert_eq!(state_a, state_b);

        // History C: one bulk import per relation, rows in reverse order, with duplicates.
        let c = database();
        c.define(PROGRAM_REWRITTEN, "c.rnt", "define").unwrap();
        for relation in ["orders", "customers"] {
            let rows: Vec<Vec<Value>> = target
                .iter()
                .rev()
                .chain(target.iter().take(3))
                .map(|row| row.change(Sign::Insert))
                .filter(|change| change.relation == relation)
                .map(|change| change.values)
                .collect();
            c.import(relation, rows.into_iter().map(Ok), "import", &mut |_| {}).unwrap();
        }
        prop_assert_eq!(c.head().unwrap().state_address, state_a);

        // And the contents are what they should be.
        let orders = a.tuples(&a.head().unwrap(), "orders").unwrap();
        let expected = target.iter().filter(|r| matches!(r, Row::Order(..))).count();
        prop_assert_eq!(orders.len(), expected);
    }
}
