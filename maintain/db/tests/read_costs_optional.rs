//! Guards the cost of an `optional` atom (SQL's LEFT JOIN, seed 000's outer join): a change
//! reads the touched join keys' matches, never the relation. The view is
//! `order_plan(i, c, p) :- orders(i, c, _), optional customers(c, p)` over customers that
//! each hold `PER_CUSTOMER` orders; the same commits run over 1,000 and over 10,000
//! customers (20,000 and 200,000 orders) and must read the same number of entries.

use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, Value};
use rnt_merkle::OperatorStat;
use rnt_store::MemoryStore;
use std::sync::Arc;

/// Orders per customer: `m`, what a change to one customer reads on the other side.
const PER_CUSTOMER: i64 = 20;

const PROGRAM: &str = "
relation orders(id: int, customer: int?, amount: int) key(id).
relation customers(id: int, plan: str) key(id).
view order_plan(id: int, customer: int?, plan: str?).
order_plan(i, c, p) :- orders(i, c, _), optional customers(c, p).
";

/// A store whose customers 0, 2, 4, … (of `customers`) exist; the odd ones hold orders
/// but no customer row, so their orders are padded with a null plan.
fn store(customers: i64) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(PROGRAM, "p.rnt", "define").expect("define");
    let rows = (0..customers)
        .step_by(2)
        .map(|c| Ok(vec![Value::Int(c), Value::Str("pro".into())]));
    db.import("customers", rows, "customers", &mut |_| {})
        .expect("customers");
    let rows = (0..customers * PER_CUSTOMER).map(|i| {
        let row = vec![Value::Int(i), Value::Int(i % customers), Value::Int(i % 97)];
        Ok(row)
    });
    db.import("orders", rows, "orders", &mut |_| {})
        .expect("orders");
    db
}

/// The entries the view's maintenance read in the commit of `changes`.
fn view_reads(db: &Database, changes: &str) -> u64 {
    let changes = parse_changes(changes, None).expect("changes parse");
    let stats: Vec<OperatorStat> = match db.commit(changes, "change", None).expect("commit") {
        CommitOutcome::Committed { stats, .. } => stats,
        CommitOutcome::NothingToCommit => panic!("nothing to commit"),
    };
    let stat = stats
        .iter()
        .find(|s| s.relation == "order_plan")
        .expect("the view was maintained");
    assert_eq!(stat.operator, "counting");
    stat.entries_read
}

/// The view's rows of customer `c`: its orders' ids, each with the plan or null.
fn rows_of(db: &Database, customer: i64) -> Vec<(i64, Value)> {
    let head = db.head().expect("head");
    let rows = db.tuples(&head, "order_plan").expect("the view");
    rows.into_iter()
        .filter(|row| row[1] == Value::Int(customer))
        .map(|row| match &row[0] {
            Value::Int(i) => (*i, row[2].clone()),
            other => panic!("an id {other}"),
        })
        .collect()
}

/// The reads of four commits, each touching one join key: a customer arriving for orders
/// that were padded, that customer leaving again, an order for a present customer, and an
/// order for an absent one.
fn reads_at(customers: i64) -> [u64; 4] {
    let db = store(customers);
    let absent = 7; // odd: no customer row
    assert!(rows_of(&db, absent).iter().all(|(_, p)| *p == Value::Null));
    let arrive = view_reads(&db, &format!("+customers({absent}, \"team\")"));
    let rows = rows_of(&db, absent);
    assert_eq!(i64::try_from(rows.len()).ok(), Some(PER_CUSTOMER));
    assert!(rows.iter().all(|(_, p)| *p == Value::Str("team".into())));
    let leave = view_reads(&db, &format!("-customers(id: {absent})"));
    assert!(rows_of(&db, absent).iter().all(|(_, p)| *p == Value::Null));
    let new_id = customers * PER_CUSTOMER;
    let present = view_reads(&db, &format!("+orders({new_id}, 4, 1)"));
    assert!(rows_of(&db, 4).contains(&(new_id, Value::Str("pro".into()))));
    let padded = view_reads(&db, &format!("+orders({}, 9, 1)", new_id + 1));
    assert!(rows_of(&db, 9).contains(&(new_id + 1, Value::Null)));
    let report = db.verify(&db.head().expect("head")).expect("verify");
    assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
    [arrive, leave, present, padded]
}

#[test]
fn an_optional_atom_reads_the_touched_keys_matches_not_the_relation() {
    let small = reads_at(1_000);
    let large = reads_at(10_000);
    eprintln!("reads [arrive, leave, present, padded]: 20k orders {small:?}, 200k {large:?}");
    // The same reads at 20,000 and at 200,000 orders: they follow the change.
    assert_eq!(small, large, "reads per commit grew with the data");
    let [arrive, leave, present, padded] = small;
    // A customer arriving or leaving reads its m orders (twice: the matched rule's join and
    // the padded rule's flipped `not`), plus a path's worth of entries per read; never the
    // 20,000 orders.
    let m = PER_CUSTOMER as u64;
    assert!((m..=4 * m).contains(&arrive), "arrive read {arrive}");
    assert!((m..=4 * m).contains(&leave), "leave read {leave}");
    // An order reads its customer (present or not) and nothing else.
    assert!(
        present <= 4,
        "an order of a present customer read {present}"
    );
    assert!(padded <= 4, "an order of an absent customer read {padded}");
}
