//! Guards transactions on the commit path (`Database::begin`, `Transaction::apply`,
//! `Transaction::commit`): changes applied in any number of batches, views maintained per
//! batch, land as one commit whose state equals (by address) one `Database::commit` of the
//! net change, at 1 and 2 threads; denials are judged once on the net change, and a
//! violated one refuses the whole commit; a branch moved since `begin` is a conflict and
//! nothing is applied again; an error in `apply` leaves the working state as it was.

use proptest::prelude::*;
use rnt_db::change::{parse_changes, Change};
use rnt_db::{ChangeSource, ChangeVec, CommitOutcome, Database, DbError, DbResult};
use rnt_store::MemoryStore;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation orders(id: int, customer: int, amount: int).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
view lonely(id: int).
lonely(i) :- orders(i, c, _), not customers(c, _).
view busy(customer: int, n: int).
busy(c, count()) :- orders(_, c, a), a > 3.
";

const DENIAL: &str = "\
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

fn db(program: &str, threads: usize, step_rows: usize) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()))
        .with_threads(threads)
        .with_import_step_rows(step_rows);
    db.define(program, "shop.rnt", "define")
        .expect("the program defines");
    commit(
        &db,
        "+customers(0, \"p0\")\n+customers(1, \"p1\")\n+orders(100, 0, 5)",
    )
    .expect("the first rows commit");
    db
}

fn changes(text: &str) -> Vec<Change> {
    parse_changes(text, None).expect("a valid change file")
}

fn commit(db: &Database, text: &str) -> DbResult<CommitOutcome> {
    db.commit(changes(text), "commit", None)
}

fn state_of(db: &Database) -> String {
    db.head().unwrap().state_address.to_hex()
}

/// A source handing out the given batches in order, each split to at most `rows_max`.
struct Batches(Vec<Vec<Change>>);

impl ChangeSource for Batches {
    fn next_batch(&mut self, rows_max: usize) -> DbResult<Option<Vec<Change>>> {
        let Some(first) = self.0.first_mut() else {
            return Ok(None);
        };
        let rest = first.split_off(rows_max.min(first.len()));
        let batch = std::mem::replace(first, rest);
        if self.0[0].is_empty() {
            self.0.remove(0);
        }
        Ok(Some(batch))
    }
}

/// One random edit: toggle an order, or upsert (or delete) a customer.
#[derive(Clone, Debug)]
enum Op {
    Order(i64, i64, i64),
    Customer(i64, i64, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..12i64, 0..5i64, 0..8i64).prop_map(|(i, c, a)| Op::Order(i, c, a)),
        (0..5i64, 0..3i64, any::<bool>()).prop_map(|(c, p, d)| Op::Customer(c, p, d)),
    ]
}

/// The contents a test tracks: orders, and customers by id.
#[derive(Clone, Default, PartialEq, Eq)]
struct Model {
    orders: BTreeSet<(i64, i64, i64)>,
    customers: BTreeMap<i64, String>,
}

impl Model {
    fn start() -> Model {
        Model {
            orders: BTreeSet::from([(100, 0, 5)]),
            customers: BTreeMap::from([(0, "p0".into()), (1, "p1".into())]),
        }
    }

    /// The change text of one batch of `ops`, valid against the model, applied to it: an
    /// order present is deleted, else inserted; a customer deleted or upserted; a tuple or
    /// key touched earlier in the batch is skipped (a change set names each once).
    fn batch(&mut self, ops: &[Op]) -> String {
        let mut text = String::new();
        let (mut orders, mut keys) = (BTreeSet::new(), BTreeSet::new());
        for op in ops {
            match *op {
                Op::Order(i, c, a) if orders.insert((i, c, a)) => {
                    let sign = if self.orders.remove(&(i, c, a)) {
                        '-'
                    } else {
                        self.orders.insert((i, c, a));
                        '+'
                    };
                    text += &format!("{sign}orders({i}, {c}, {a})\n");
                }
                Op::Customer(c, p, delete) if keys.insert(c) => match delete {
                    true => {
                        if let Some(plan) = self.customers.remove(&c) {
                            text += &format!("-customers({c}, \"{plan}\")\n");
                        }
                    }
                    false => {
                        self.customers.insert(c, format!("p{p}"));
                        text += &format!("+customers({c}, \"p{p}\")\n");
                    }
                },
                _ => {}
            }
        }
        text
    }

    /// The change text taking `self` to `end` in one change set.
    fn net(&self, end: &Model) -> String {
        let mut text = String::new();
        for (i, c, a) in self.orders.difference(&end.orders) {
            text += &format!("-orders({i}, {c}, {a})\n");
        }
        for (i, c, a) in end.orders.difference(&self.orders) {
            text += &format!("+orders({i}, {c}, {a})\n");
        }
        for (c, plan) in &self.customers {
            if !end.customers.contains_key(c) {
                text += &format!("-customers({c}, \"{plan}\")\n");
            }
        }
        for (c, plan) in &end.customers {
            if self.customers.get(c) != Some(plan) {
                text += &format!("+customers({c}, \"{plan}\")\n");
            }
        }
        text
    }
}

/// Runs `batches` of ops in one transaction on a fresh database; returns it with the
/// change text of the net change.
fn transaction_of(batches: &[Vec<Op>], threads: usize, step_rows: usize) -> (Database, String) {
    let db = db(PROGRAM, threads, step_rows);
    let start = Model::start();
    let mut model = start.clone();
    let texts: Vec<Vec<Change>> = batches
        .iter()
        .map(|ops| changes(&model.batch(ops)))
        .collect();
    let mut tx = db.begin().unwrap();
    tx.apply(&mut Batches(texts)).unwrap();
    tx.commit("transaction").unwrap();
    let net = start.net(&model);
    (db, net)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("RNT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32)
    ))]

    /// Batches of any size, with deletes and re-inserts across them, give the state of one
    /// commit of the net change, at 1 and 2 threads, as one commit that verifies.
    #[test]
    fn batches_equal_one_commit_of_the_net_change(
        batches in prop::collection::vec(prop::collection::vec(op(), 0..10), 1..8),
        step in 1..6usize,
    ) {
        let (one, net) = transaction_of(&batches, 1, step);
        let (two, _) = transaction_of(&batches, 2, step);
        let at_once = db(PROGRAM, 1, usize::MAX);
        commit(&at_once, &net).unwrap();
        prop_assert_eq!(state_of(&one), state_of(&at_once));
        prop_assert_eq!(state_of(&two), state_of(&at_once));
        let log = one.log().unwrap();
        let commits = if net.is_empty() { 2 } else { 3 };
        prop_assert_eq!(log.len(), commits, "one commit for the whole transaction");
        let head = one.head().unwrap();
        prop_assert!(one.verify(&head).unwrap().mismatches.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("RNT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32)
    ))]

    /// With a denial, the transaction is refused exactly when one commit of the net change
    /// is, whatever the batches (a witness a later batch removes never refuses), and a
    /// refused one changes nothing.
    #[test]
    fn a_denial_judges_the_net_change_as_one_commit_does(
        batches in prop::collection::vec(prop::collection::vec(op(), 0..8), 1..6),
        step in 1..4usize,
    ) {
        let program = format!("{PROGRAM}{DENIAL}");
        let stepped = db(&program, 2, step);
        let before = state_of(&stepped);
        let start = Model::start();
        let mut model = start.clone();
        let texts: Vec<Vec<Change>> =
            batches.iter().map(|ops| changes(&model.batch(ops))).collect();
        let mut tx = stepped.begin().unwrap();
        tx.apply(&mut Batches(texts)).unwrap();
        let outcome = tx.commit("transaction");
        let at_once = db(&program, 1, usize::MAX);
        let one = commit(&at_once, &start.net(&model));
        match (&outcome, &one) {
            (Err(DbError::DenialViolated { .. }), Err(DbError::DenialViolated { .. })) => {
                prop_assert_eq!(state_of(&stepped), before, "a refused transaction changes nothing");
            }
            (Ok(_), Ok(_)) => prop_assert_eq!(state_of(&stepped), state_of(&at_once)),
            _ => prop_assert!(false, "transaction {:?}, one commit {:?}", outcome, one),
        }
    }
}

#[test]
fn the_commit_counts_the_net_change() {
    let db = db(PROGRAM, 1, 1);
    let mut tx = db.begin().unwrap();
    let batches = vec![
        changes("+orders(1, 0, 1)\n+orders(2, 0, 1)"),
        changes("-orders(1, 0, 1)"),
        changes("+orders(1, 0, 1)\n-orders(100, 0, 5)"),
    ];
    let applied = tx.apply(&mut Batches(batches)).unwrap();
    assert_eq!((applied.batches, applied.changes), (5, 5), "1 row per step");
    let CommitOutcome::Committed { changes, .. } = tx.commit("t").unwrap() else {
        panic!("a commit");
    };
    let counts: Vec<_> = changes
        .iter()
        .map(|c| (c.relation.as_str(), c.inserted, c.deleted))
        .collect();
    assert_eq!(counts, vec![("orders", 2, 1)]);
}

#[test]
fn reads_inside_see_the_transactions_writes_and_the_head_does_not() {
    let db = db(PROGRAM, 1, 2);
    let head = db.head().unwrap();
    let mut tx = db.begin().unwrap();
    tx.apply(&mut ChangeVec::new(changes(
        "+orders(7, 1, 9)\n+customers(2, \"p2\")",
    )))
    .unwrap();
    let inside = db.tuples(tx.snapshot(), "order_plan").unwrap();
    assert_eq!(
        inside.len(),
        2,
        "the view is maintained in the working state"
    );
    assert_eq!(db.tuples(tx.start(), "order_plan").unwrap().len(), 1);
    assert_eq!(
        db.head().unwrap().commit,
        head.commit,
        "nothing lands before commit"
    );
    drop(tx);
    assert_eq!(
        db.head().unwrap().commit,
        head.commit,
        "dropping is a rollback"
    );
}

#[test]
fn a_witness_removed_by_a_later_batch_does_not_refuse() {
    let db = db(&format!("{PROGRAM}{DENIAL}"), 1, 1);
    let mut tx = db.begin().unwrap();
    // The order's customer arrives in a later batch: no step may judge the denial.
    let batches = vec![
        changes("+orders(5, 9, 1)"),
        changes("+customers(9, \"p9\")"),
    ];
    tx.apply(&mut Batches(batches)).unwrap();
    assert!(matches!(
        tx.commit("t").unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(db.tuples(&db.head().unwrap(), "orders").unwrap().len(), 2);
}

#[test]
fn a_denial_violated_by_the_net_change_refuses_the_whole_commit() {
    let db = db(&format!("{PROGRAM}{DENIAL}"), 2, 1);
    let before = db.head().unwrap();
    let mut tx = db.begin().unwrap();
    // Each batch alone is fine at its step; the net change leaves order 6 an orphan.
    let batches = vec![
        changes("+customers(9, \"p9\")\n+orders(6, 9, 1)\n+orders(7, 0, 1)"),
        changes("-customers(9, _)"),
    ];
    tx.apply(&mut Batches(batches)).unwrap();
    match tx.commit("t") {
        Err(DbError::DenialViolated { denial, .. }) => assert_eq!(denial, "orphan"),
        other => panic!("expected the denial, got {other:?}"),
    }
    let after = db.head().unwrap();
    assert_eq!(after.commit, before.commit, "nothing was committed");
    assert_eq!(db.log().unwrap().len(), 2, "define and the first rows only");
}

#[test]
fn a_branch_moved_since_begin_is_a_conflict_and_nothing_is_reapplied() {
    let db = db(PROGRAM, 1, 4);
    let mut tx = db.begin().unwrap();
    tx.apply(&mut ChangeVec::new(changes("+orders(8, 0, 2)")))
        .unwrap();
    // Another writer lands first, through its own handle on the store.
    let other = Database::new(Arc::clone(db.chunks()));
    commit(&other, "+orders(9, 1, 2)").unwrap();
    let landed = db.head().unwrap();
    match tx.commit("t") {
        Err(DbError::Conflict(message)) => {
            assert!(
                message.contains("moved since this transaction began"),
                "{message}"
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let head = db.head().unwrap();
    assert_eq!(
        head.commit, landed.commit,
        "the other writer's commit stays the head"
    );
    let orders = db.tuples(&head, "orders").unwrap();
    assert_eq!(
        orders.len(),
        2,
        "order 8 was not applied to the new head: {orders:?}"
    );
}

#[test]
fn an_error_in_apply_leaves_the_working_state_as_it_was() {
    let db = db(PROGRAM, 1, 1);
    let mut tx = db.begin().unwrap();
    tx.apply(&mut ChangeVec::new(changes("+orders(1, 0, 1)")))
        .unwrap();
    let kept = tx.snapshot().state_address;
    // The second batch names a relation that does not exist.
    let error = tx
        .apply(&mut Batches(vec![
            changes("+orders(2, 0, 1)"),
            changes("+nope(1)"),
        ]))
        .unwrap_err();
    assert!(matches!(error, DbError::User(_)), "{error:?}");
    assert_eq!(tx.snapshot().state_address, kept);
    tx.commit("t").unwrap();
    assert_eq!(db.tuples(&db.head().unwrap(), "orders").unwrap().len(), 2);
}
