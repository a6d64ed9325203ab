//! Guards stepwise imports: an import into a relation that views read is applied and
//! maintained in bounded steps, yet lands as one commit whose state equals (by address) the
//! same rows committed at once; a denial witness in any step refuses the whole import; a
//! denial that is non-monotone in the relation is judged on the whole import only.

use proptest::prelude::*;
use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, DbError, Value};
use rnt_store::MemoryStore;
use std::sync::Arc;

const PROGRAM: &str = "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
view big(customer: int, n: int).
big(c, count()) :- orders(_, c, a), a > 50.
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

fn db(step_rows: usize) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(step_rows);
    db.define(PROGRAM, "shop.rnt", "define").unwrap();
    let customers: String = (0..10)
        .map(|c| format!("+customers({c}, \"plan{}\")\n", c % 3))
        .collect();
    db.commit(parse_changes(&customers, None).unwrap(), "customers", None)
        .unwrap();
    db
}

fn rows(orders: &[(i64, i64, i64)]) -> Vec<Result<Vec<Value>, DbError>> {
    orders
        .iter()
        .map(|(i, c, a)| Ok(vec![Value::Int(*i), Value::Int(*c), Value::Int(*a)]))
        .collect()
}

fn state_of(db: &Database) -> String {
    db.head().unwrap().state_address.to_hex()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("RNT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32)
    ))]

    /// Steps of any size give the state of one commit of the same rows, and it verifies.
    #[test]
    fn stepwise_import_equals_one_commit(
        orders in prop::collection::vec((0..300i64, 0..10i64, 0..100i64), 1..120),
        step in 1..40usize,
    ) {
        let stepped = db(step);
        let outcome = stepped.import("orders", rows(&orders), "import", &mut |_| {}).unwrap();
        let at_once = db(usize::MAX);
        let text: String = {
            let mut seen = std::collections::BTreeSet::new();
            orders
                .iter()
                .filter(|o| seen.insert(**o))
                .map(|(i, c, a)| format!("+orders({i}, {c}, {a})\n"))
                .collect()
        };
        at_once.commit(parse_changes(&text, None).unwrap(), "commit", None).unwrap();
        prop_assert_eq!(state_of(&stepped), state_of(&at_once));
        let log = stepped.log().unwrap();
        prop_assert_eq!(log.len(), 3, "one commit for the whole import");
        if let CommitOutcome::Committed { changes, .. } = outcome {
            let distinct = orders.iter().collect::<std::collections::BTreeSet<_>>().len();
            prop_assert_eq!(changes[0].inserted, distinct as u64);
        }
        let head = stepped.head().unwrap();
        prop_assert!(stepped.verify(&head).unwrap().mismatches.is_empty());
    }
}

#[test]
fn a_witness_in_any_step_refuses_the_whole_import() {
    let db = db(3);
    let before = state_of(&db);
    // Customer 99 does not exist: order 7 is an orphan, in the third step of four.
    let orders = [
        (1, 1, 5),
        (2, 2, 5),
        (3, 3, 5),
        (4, 4, 5),
        (5, 5, 5),
        (6, 6, 5),
        (7, 99, 5),
        (8, 8, 5),
        (9, 9, 5),
        (10, 1, 5),
    ];
    let error = db
        .import("orders", rows(&orders), "import", &mut |_| {})
        .unwrap_err();
    assert!(
        matches!(&error, DbError::DenialViolated { denial, witness, .. } if denial == "orphan" && witness == "orphan(7)"),
        "{error}"
    );
    assert_eq!(state_of(&db), before, "nothing of the import was committed");
}

#[test]
fn a_non_monotone_denial_is_judged_on_the_whole_import() {
    // `lonely(1)` holds while r has 1 but not 2: true after a first step holding only 1,
    // false at the end. Judged step by step, the import would be refused.
    let db = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(1);
    db.define(
        "relation r(x: int).\nview v(x: int).\nv(x) :- r(x).\ndenial lonely(x: int).\nlonely(x) :- r(x), x = 1, not r(2).\n",
        "p.rnt",
        "define",
    )
    .unwrap();
    let rows = vec![Ok(vec![Value::Int(1)]), Ok(vec![Value::Int(2)])];
    let outcome = db.import("r", rows, "import", &mut |_| {}).unwrap();
    assert!(matches!(outcome, CommitOutcome::Committed { .. }));
    let head = db.head().unwrap();
    assert!(db.verify(&head).unwrap().mismatches.is_empty());
}
