//! Guards the cost model through the node store's counters: binding-aware reads probe the
//! matching tuples, not the relation; and reads per commit follow the operator table of
//! docs/costs.md (a filter or projection reads nothing beyond its delta, a join reads the other
//! side's tuples under the touched keys, SUM/COUNT reads one accumulator per touched group,
//! COUNT_DISTINCT one match count per changed (group, value), CONCAT the touched group's
//! values, a window its touched partitions, a running window its partition from the first
//! changed row on, a top-k the front of its partition).

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, Value};
use rnt_merkle::OperatorStat;
use rnt_store::MemoryStore;
use std::sync::Arc;

/// The rows of `running(customer, id, total)` for one customer's orders `[id, customer,
/// amount]` in id order: each order with the sum of the amounts up to it.
fn running_rows(orders: &[[i64; 3]]) -> Vec<Vec<Value>> {
    let mut total = 0;
    orders
        .iter()
        .map(|[i, c, a]| {
            total += a;
            vec![Value::Int(*c), Value::Int(*i), Value::Int(total)]
        })
        .collect()
}

fn commit(db: &Database, text: &str) -> Vec<OperatorStat> {
    stats_of(
        db.commit(parse_changes(text, None).expect("parse"), "test", None)
            .expect("commit"),
    )
}

/// The stats of a commit that was made.
fn stats_of(outcome: CommitOutcome) -> Vec<OperatorStat> {
    match outcome {
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

/// Order `i` of `matches`: customer `i % 1000`, 100 days of consecutive orders, 40 amounts.
/// So a day holds `matches / 100` orders of as many customers, on up to 500 plans, and a
/// customer `matches / 1000` orders: groups and their distinct values grow with the size.
fn distinct_order(i: i64, matches: i64) -> [i64; 4] {
    [i, i % 1_000, i * 100 / matches, (i / 1_000) % 40]
}

fn order_text(sign: char, [i, c, d, a]: [i64; 4]) -> String {
    format!("{sign}orders({i}, {c}, {d}, {a})\n")
}

/// Customers 0..1,000, customer `c` on plan `plan{c % plans}`.
fn import_customers(db: &Database, plans: i64) {
    import(
        db,
        "customers",
        (0..1_000i64).map(|c| vec![Value::Int(c), Value::Str(format!("plan{}", c % plans))]),
    );
}

/// W7's shape, `orders(_, c, _)` read only to count a customer's orders: 1,000 customers
/// on 5 plans and `per_customer` orders each.
fn counted_db(per_customer: i64) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(
        r#"
        relation orders(id: int, customer: int, amount: int).
        relation customers(id: int, plan: str).
        view plan_customers(plan: str, n: int).
        view plan_orders(plan: str, n: int).
        plan_customers(p, count_distinct(c)) :- orders(_, c, _), customers(c, p).
        plan_orders(p, count()) :- orders(_, c, _), customers(c, p).
        "#,
        "p.rnt",
        "define",
    )
    .unwrap();
    import_customers(&db, 5);
    import(
        &db,
        "orders",
        (0..1_000 * per_customer)
            .map(|i| vec![Value::Int(i), Value::Int(i % 1_000), Value::Int(i % 97)]),
    );
    db
}

/// A read that only counts the tuples under its bound columns is served by a count index:
/// a customer's plan change reads one count for the customer whether it has 10 orders or
/// 100 (through an index of whole tuples it would read them all), and an order whose amount
/// changes touches neither view (the update cancels out of a term that ignores amounts)
/// nor the count index.
#[test]
fn a_counting_read_reads_one_count_and_ignored_updates_read_nothing() {
    let mut reads = Vec::new();
    for per_customer in [10i64, 100] {
        let db = counted_db(per_customer);
        let head = db.head().unwrap();
        let orders = head.entry("orders").unwrap();
        let labels: Vec<&str> = orders.aux.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(
            labels,
            ["count 1"],
            "orders keeps a count index, not `index 1,0,2`"
        );
        // Three customers move to another plan.
        let moves: String = [3i64, 4, 5]
            .iter()
            .map(|c| {
                format!(
                    "-customers({c}, \"plan{}\")\n+customers({c}, \"plan{}\")\n",
                    c % 5,
                    (c + 1) % 5
                )
            })
            .collect();
        let stats = commit(&db, &moves);
        let distinct = stat(&stats, "plan_customers");
        let counted = stat(&stats, "plan_orders");
        // Per moved customer, old and new: its count (1 entry); then per touched plan its
        // accumulator, and per (plan, customer) its match count.
        assert!(distinct.entries_read <= 3 * 2 + 4 + 6, "{distinct:?}");
        assert!(counted.entries_read <= 3 * 2 + 4, "{counted:?}");
        reads.push((distinct.entries_read, counted.entries_read));
        let base = stat(&stats, "customers");
        assert_eq!(base.operator, "base");
        // Amounts change for orders of three customers: no view reads or writes anything,
        // and the count index keeps its root.
        let before = db.head().unwrap();
        let updates: String = [(0i64, 3i64), (1, 4), (2, 5)]
            .iter()
            .map(|(k, c)| {
                let id = k * 1_000 + c;
                format!("-orders({id}, {c}, {})\n+orders({id}, {c}, 500)\n", id % 97)
            })
            .collect();
        let stats = commit(&db, &updates);
        for view in ["plan_customers", "plan_orders"] {
            if let Some(s) = stats.iter().find(|s| s.relation == view) {
                assert_eq!((s.entries_read, s.nodes_written), (0, 0), "{s:?}");
            }
        }
        let after = db.head().unwrap();
        let count_root = |s: &rnt_db::Snapshot| {
            s.entry("orders")
                .unwrap()
                .aux_tree("count 1")
                .map(|t| t.root())
        };
        assert_eq!(count_root(&before), count_root(&after));
        assert_ne!(
            before.entry("orders").unwrap().root,
            after.entry("orders").unwrap().root
        );
        assert!(db.verify(&after).unwrap().mismatches.is_empty());
        // The views' numbers, counted here: the plans' customers and their orders.
        let rows = db.tuples(&after, "plan_orders").unwrap();
        let mut plans = std::collections::BTreeMap::new();
        for c in 0..1_000i64 {
            let plan = if (3..=5).contains(&c) {
                (c + 1) % 5
            } else {
                c % 5
            };
            *plans.entry(format!("plan{plan}")).or_insert(0i64) += per_customer;
        }
        let expected: Vec<Vec<Value>> = plans
            .into_iter()
            .map(|(p, n)| vec![Value::Str(p), Value::Int(n)])
            .collect();
        assert_eq!(rows, expected);
    }
    assert_eq!(
        reads[0], reads[1],
        "10 orders a customer: {:?}, 100: {:?}",
        reads[0], reads[1]
    );
}

/// The count_distinct read-cost store: 1,000 customers on 500 plans, `matches` orders.
fn distinct_db(matches: i64) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(
        r#"
        relation orders(id: int, customer: int, day: int, amount: int).
        relation customers(id: int, plan: str).
        view plans_per_day(day: int, n: int).
        view amounts(customer: int, n: int, orders: int).
        plans_per_day(d, count_distinct(p)) :- orders(_, c, d, _), customers(c, p).
        amounts(c, count_distinct(a), count()) :- orders(_, c, _, a).
        "#,
        "p.rnt",
        "define",
    )
    .unwrap();
    import_customers(&db, 500);
    import(
        &db,
        "orders",
        (0..matches).map(|i| distinct_order(i, matches).map(Value::Int).to_vec()),
    );
    db
}

/// COUNT_DISTINCT reads one match count per changed (group, value) and one accumulator per
/// touched group: a commit of four changes reads the same handful of entries over 10,000
/// matches as over 100,000 (O(Δ)), never the group's values.
#[test]
fn count_distinct_reads_one_count_per_changed_group_and_value() {
    let mut reads = Vec::new();
    for matches in [10_000i64, 100_000] {
        let db = distinct_db(matches);
        // A new amount for customer 5 (0 → 1) on day 3, customer 6's amount 0 again
        // (k → k + 1) on day 4, order 7 gone (customer 7's amount 0 loses a match), order 8
        // moved to day 99.
        let [i, c, d, a] = distinct_order(8, matches);
        let changes = [
            order_text('+', [matches, 5, 3, 999]),
            order_text('+', [matches + 1, 6, 4, 0]),
            order_text('-', distinct_order(7, matches)),
            order_text('-', [i, c, d, a]),
            order_text('+', [i, c, 99, a]),
        ];
        let stats = commit(&db, &changes.concat());
        let day = stat(&stats, "plans_per_day");
        let amount = stat(&stats, "amounts");
        assert_eq!(day.operator, "aggregate");
        assert_eq!(amount.operator, "aggregate");
        // Per changed order: the customer under its key (plans_per_day), then per touched
        // group its accumulator and per touched (group, value) its match count.
        // Five changed orders, at most five touched groups and five (group, value) pairs.
        assert!(day.entries_read <= 5 * 2 + 5 + 5, "{day:?}");
        assert!(amount.entries_read <= 4 + 5, "{amount:?}");
        reads.push((
            day.entries_read,
            amount.entries_read,
            day.nodes_read + amount.nodes_read,
        ));

        let head = db.head().unwrap();
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
        // Customer 5's distinct amounts, counted here from the rows imported and committed.
        let mut expected: std::collections::BTreeSet<i64> = (0..matches)
            .filter(|i| i % 1_000 == 5)
            .map(|i| distinct_order(i, matches)[3])
            .collect();
        expected.insert(999);
        let rows = db.tuples(&head, "amounts").unwrap();
        let row = rows.iter().find(|r| r[0] == Value::Int(5)).unwrap();
        assert_eq!(row[1], Value::Int(expected.len() as i64), "{row:?}");
    }
    let (small, large) = (reads[0], reads[1]);
    // Ten times the matches (five times the plans a day, four times the amounts a customer),
    // the same entries read up to the (group, value) pairs that exist at one size and not the
    // other (a hit reads an entry, a miss none): nothing proportional to a group's size.
    // Nodes grow with the trees' depth at most.
    assert!(
        large.0 <= small.0 + 5 && large.1 <= small.1 + 5,
        "10k: {small:?}, 100k: {large:?}"
    );
    assert!(
        large.2 <= small.2 * 3 / 2,
        "10k: {small:?}, 100k: {large:?}"
    );
}

/// Note `i` of `notes`: customer `i % (notes / 20)`, text `n` and the note's rank within its
/// customer: every customer has 20 distinct notes at any size, and there are `notes / 20`
/// customers, so the relation grows and the groups do not.
fn concat_note(i: i64, notes: i64) -> (i64, i64, String) {
    let customers = notes / 20;
    (i, i % customers, format!("n{:02}", i / customers))
}

/// CONCAT is the fallback (D∘Q∘I per touched group): a commit touching one group re-reads
/// that group's values, one prefix scan of its m entries, and its accumulator — the same
/// entries over 10,000 notes as over 100,000, nothing of the other groups or the relation.
#[test]
fn concat_reads_the_touched_groups_values_not_the_relation() {
    const GROUP_VALUES: u64 = 20;
    let mut reads = Vec::new();
    for notes in [10_000i64, 100_000] {
        let db = Database::new(Arc::new(MemoryStore::new()));
        db.define(
            r#"
            relation notes(id: int, customer: int, note: str).
            view noted(customer: int, notes: str, n: int).
            noted(c, concat(t, ", "), count()) :- notes(_, c, t).
            "#,
            "p.rnt",
            "define",
        )
        .unwrap();
        import(
            &db,
            "notes",
            (0..notes).map(|i| {
                let (i, c, t) = concat_note(i, notes);
                vec![Value::Int(i), Value::Int(c), Value::Str(t)]
            }),
        );
        // Customer 5 gets a note between its 6th and 7th ("n05" < "n05x" < "n06").
        let stats = commit(&db, &format!("+notes({notes}, 5, \"n05x\")\n"));
        let noted = stat(&stats, "noted");
        assert_eq!(noted.operator, "aggregate");
        // The group's m values (one scan) and its accumulator, give or take the scan's end.
        assert!(
            GROUP_VALUES <= noted.entries_read && noted.entries_read <= GROUP_VALUES + 4,
            "{noted:?}"
        );
        reads.push((noted.entries_read, noted.nodes_read));

        let head = db.head().unwrap();
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
        // Customer 5's notes, joined here from the rows imported and committed.
        let mut expected: Vec<String> = (0..notes)
            .map(|i| concat_note(i, notes))
            .filter(|(_, c, _)| *c == 5)
            .map(|(_, _, t)| t)
            .collect();
        expected.push("n05x".to_string());
        expected.sort();
        let rows = db.tuples(&head, "noted").unwrap();
        let row = rows.iter().find(|r| r[0] == Value::Int(5)).unwrap();
        assert_eq!(row[1], Value::Str(expected.join(", ")), "{row:?}");
        assert_eq!(row[2], Value::Int(GROUP_VALUES as i64 + 1));
    }
    let (small, large) = (reads[0], reads[1]);
    // Ten times the notes, the same group: the same entries; nodes grow with depth at most.
    assert_eq!(small.0, large.0, "10k: {small:?}, 100k: {large:?}");
    assert!(
        large.1 <= small.1 * 3 / 2,
        "10k: {small:?}, 100k: {large:?}"
    );
}

/// Order `i` of `orders`: customer `i % (orders / 20)`, so every customer has 20 orders at
/// any size and the relation grows while the partitions do not; amounts repeat (ties).
fn window_order(i: i64, orders: i64) -> [i64; 3] {
    let customers = orders / 20;
    [i, i % customers, (i * 7) % 13]
}

/// A window view reads its touched partitions only: a commit touching one customer reads
/// that customer's orders — the running sum from the changed row (here the first) to the
/// partition's end, once, with the partition's total; the fallback (`top3`, whose order
/// mixes directions) the whole partition twice, old and new — and the view's counts of the
/// rows that change: the same entries over 10,000 orders as over 100,000, nothing of the
/// other partitions.
#[test]
fn windows_read_the_touched_partitions_not_the_relation() {
    const PARTITION: u64 = 20;
    let mut reads = Vec::new();
    for orders in [10_000i64, 100_000] {
        let db = Database::new(Arc::new(MemoryStore::new()));
        db.define(
            r#"
            relation orders(id: int, customer: int, amount: int).
            view running(customer: int, id: int, total: int).
            running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
            view top3(customer: int, id: int, k: int).
            top3(c, i, k) :- orders(i, c, a), k = rank() over (partition c order a desc, i), k <= 3.
            "#,
            "p.rnt",
            "define",
        )
        .unwrap();
        import(
            &db,
            "orders",
            (0..orders).map(|i| window_order(i, orders).map(Value::Int).to_vec()),
        );
        // Customer 5 gets an order before all its others (id -1): every running total of
        // the partition moves; a small amount, so its top 3 stays. (An order mixing `desc`
        // and ascending terms is no top-k: `top3` reads its partition whole.)
        let stats = commit(&db, "+orders(-1, 5, 0)\n");
        let running = stat(&stats, "running");
        let top3 = stat(&stats, "top3");
        assert_eq!(running.operator, "window");
        assert_eq!(top3.operator, "window");
        // The partition old and new, then one count per changed row (21 new, 20 old).
        let partition_reads = 2 * PARTITION + 1;
        assert!(
            running.entries_read <= partition_reads + 2 * PARTITION + 1 + 8,
            "{running:?}"
        );
        assert!(top3.entries_read <= partition_reads + 8, "{top3:?}");
        reads.push((
            running.entries_read,
            top3.entries_read,
            running.nodes_read + top3.nodes_read,
        ));

        let head = db.head().unwrap();
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
        // Customer 5's running totals, summed here from the rows imported and committed.
        let mut mine: Vec<[i64; 3]> = (0..orders)
            .map(|i| window_order(i, orders))
            .filter(|[_, c, _]| *c == 5)
            .collect();
        mine.insert(0, [-1, 5, 0]);
        let expected = running_rows(&mine);
        let rows = db.tuples(&head, "running").unwrap();
        let got: Vec<Vec<Value>> = rows.into_iter().filter(|r| r[0] == Value::Int(5)).collect();
        assert_eq!(got, expected);
    }
    let (small, large) = (reads[0], reads[1]);
    // Ten times the orders, the same partition: the same entries; nodes grow with depth.
    assert_eq!(
        (small.0, small.1),
        (large.0, large.1),
        "10k: {small:?}, 100k: {large:?}"
    );
    assert!(
        large.2 <= small.2 * 3 / 2,
        "10k: {small:?}, 100k: {large:?}"
    );
}

/// Top-k (docs/costs.md's O(K·k)): a rank bounded by a constant over ascending order terms
/// reads each touched partition's old front only, once, from the index that holds it in
/// window order, up to the first row past the bound, and derives the new front from it —
/// k + 1 entries per touched partition (and the view's counts of the rows that change), the
/// same over partitions of 20 and of 200 orders (10k and 100k orders), never the whole
/// partition; a descending order reads the index backward. A delete that empties the front
/// past what was read reads the new front too.
#[test]
fn top_k_reads_the_front_of_the_touched_partition() {
    const K: u64 = 3;
    let mut reads = Vec::new();
    for (orders, per_customer) in [(10_000i64, 20i64), (100_000, 200)] {
        let db = Database::new(Arc::new(MemoryStore::new()));
        db.define(
            r#"
            relation orders(id: int, customer: int, amount: int).
            view cheapest(customer: int, id: int, k: int).
            cheapest(c, i, k) :- orders(i, c, a), k = rank() over (partition c order a), k <= 3.
            view priciest(customer: int, id: int, k: int).
            priciest(c, i, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 3.
            "#,
            "p.rnt",
            "define",
        )
        .unwrap();
        let customers = orders / per_customer;
        // Amounts 10, 20, … per customer: distinct, so ranks are positions.
        let order = move |i: i64| [i, i % customers, 10 * (i / customers) + 10];
        import(
            &db,
            "orders",
            (0..orders).map(|i| order(i).map(Value::Int).to_vec()),
        );
        // Customer 5 gets a new cheapest order: every rank of its front moves by one.
        let stats = commit(&db, &format!("+orders({orders}, 5, 1)\n"));
        let cheapest = stat(&stats, "cheapest");
        assert_eq!(cheapest.operator, "window");
        assert!(cheapest.entries_read <= (K + 1) + 4, "{cheapest:?}");
        // The descending front is the back of the index, read backward: the same bound.
        let priciest = stat(&stats, "priciest");
        assert!(priciest.entries_read <= (K + 1) + 4, "{priciest:?}");
        reads.push((cheapest.entries_read, priciest.entries_read));

        let head = db.head().unwrap();
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
        let rows = db.tuples(&head, "cheapest").unwrap();
        let mine: Vec<&Vec<Value>> = rows.iter().filter(|r| r[0] == Value::Int(5)).collect();
        let expected = [(5, 2), (5 + customers, 3), (orders, 1)];
        assert_eq!(mine.len(), expected.len(), "{mine:?}");
        for (row, (id, k)) in mine.iter().zip(expected) {
            assert!(
                row[1] == Value::Int(id) && row[2] == Value::Int(k),
                "{mine:?}"
            );
        }
        // Deleting the whole front: the new front lies past what the old read saw, so it is
        // read too — and is the next three orders.
        let deletes = [(orders, 1), (5, 10), (5 + customers, 20)]
            .map(|(id, amount)| format!("-orders({id}, 5, {amount})\n"))
            .concat();
        commit(&db, &deletes);
        let head = db.head().unwrap();
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
        let rows = db.tuples(&head, "cheapest").unwrap();
        let ids: Vec<&Value> = rows
            .iter()
            .filter(|r| r[0] == Value::Int(5))
            .map(|r| &r[1])
            .collect();
        let next: Vec<Value> = (2..5).map(|n| Value::Int(5 + n * customers)).collect();
        assert_eq!(ids, next.iter().collect::<Vec<_>>());
    }
    // Partitions ten times longer: the same front, the same entries.
    assert_eq!(reads[0], reads[1], "{reads:?}");
}

/// Running values (docs/costs.md's "running total, appends": O(1) per change): an order appended
/// at the end of its customer's partition reads the partition's total and no row for a
/// running `sum` and `count`, and the `n` rows before it for `lag`/`lead` — the same
/// entries whether partitions hold 20 orders or 200 (5k and 50k orders). A change at
/// position i reads and re-emits the m − i rows after it: an order inserted before the
/// last 5 of a partition moves exactly their running totals.
#[test]
fn a_running_append_reads_the_tail_not_the_partition() {
    let mut appends = Vec::new();
    for (orders, per_customer) in [(5_000i64, 20i64), (50_000, 200)] {
        let db = Database::new(Arc::new(MemoryStore::new()));
        db.define(
            r#"
            relation orders(id: int, customer: int, amount: int).
            view running(customer: int, id: int, total: int).
            running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
            view counted(customer: int, id: int, n: int).
            counted(c, i, n) :- orders(i, c, _), n = count() over (partition c order i).
            view gaps(customer: int, id: int, previous: int).
            gaps(c, i, p) :- orders(i, c, _), p = lag(i, 2, 0) over (partition c order i).
            view nexts(customer: int, id: int, next: int).
            nexts(c, i, x) :- orders(i, c, _), x = lead(i, 1, -1) over (partition c order i).
            "#,
            "p.rnt",
            "define",
        )
        .unwrap();
        let customers = orders / per_customer;
        let order = move |i: i64| [i, i % customers, i % 9 + 1];
        import(
            &db,
            "orders",
            (0..orders).map(|i| order(i).map(Value::Int).to_vec()),
        );
        // Customer 5's next order, after all its others.
        let stats = commit(&db, &format!("+orders({orders}, 5, 4)\n"));
        let reads: Vec<u64> = ["running", "counted", "gaps", "nexts"]
            .iter()
            .map(|view| {
                let stat = stat(&stats, view);
                assert_eq!(stat.operator, "window");
                stat.entries_read
            })
            .collect();
        // A total and the first key past the partition; lag 2 also its 2 last rows, lead
        // its last row; then the view's counts of the rows that change (1, and lead's 2).
        assert!(reads[0] <= 3 && reads[1] <= 3, "{reads:?}");
        assert!(reads[2] <= 4 && reads[3] <= 4, "{reads:?}");
        appends.push(reads);

        // An order before customer 5's last five: their running totals move, no other.
        let last_five = (orders - 5 * customers + 5) - 1;
        let before = db.tuples(&db.head().unwrap(), "running").unwrap();
        let stats = commit(&db, &format!("+orders({last_five}, 5, 1000)\n"));
        let running = stat(&stats, "running");
        // The 5 rows after it (and its own place), read once; 6 old and 7 new counts.
        assert!(running.entries_read <= 6 + 1 + 2 + 13, "{running:?}");
        let head = db.head().unwrap();
        let after = db.tuples(&head, "running").unwrap();
        let moved: Vec<&Vec<Value>> = after.iter().filter(|r| !before.contains(r)).collect();
        assert_eq!(
            moved.len(),
            7,
            "the new order, the appended one and the 5 after: {moved:?}"
        );
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
        // Customer 5's running totals, summed here from the rows imported and committed.
        let mut mine: Vec<[i64; 3]> = (0..orders)
            .map(order)
            .filter(|[_, c, _]| *c == 5)
            .chain([[orders, 5, 4], [last_five, 5, 1000]])
            .collect();
        mine.sort();
        let expected = running_rows(&mine);
        let got: Vec<Vec<Value>> = after
            .into_iter()
            .filter(|r| r[0] == Value::Int(5))
            .collect();
        assert_eq!(got, expected);
    }
    // Partitions ten times longer: the same appends, the same entries.
    assert_eq!(appends[0], appends[1], "{appends:?}");
}

/// A store of `n` orders, one per second (`orders_at(i, ts = i)`), under a window of the
/// last `n / 2` seconds, at clock `n`: half the orders are inside.
fn clocked_db(n: i64) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    let program = format!(
        "relation orders_at(id: int, ts: int).\n\
         view recent(id: int).\n\
         recent(i) :- orders_at(i, ts), ts > now - {}.\n",
        n / 2
    );
    db.define_with_clock(&program, "p.rnt", "define", Some(n), &mut |_| {})
        .unwrap();
    let rows: String = (0..n).map(|i| format!("+orders_at({i}, {i})\n")).collect();
    db.commit(parse_changes(&rows, None).unwrap(), "load", Some(n))
        .unwrap();
    db
}

fn commit_at(db: &Database, text: &str, clock: i64) -> Vec<OperatorStat> {
    stats_of(
        db.commit(
            parse_changes(text, None).expect("parse"),
            "test",
            Some(clock),
        )
        .expect("commit"),
    )
}

fn operator_stat<'a>(stats: &'a [OperatorStat], operator: &str) -> &'a OperatorStat {
    stats
        .iter()
        .find(|s| s.operator == operator)
        .unwrap_or_else(|| panic!("no {operator} stat: {stats:?}"))
}

#[test]
fn a_clock_step_reads_the_rows_that_leave_not_the_window() {
    // Windows of 1,000 and 10,000 rows; each clock step expires E = 1, 10, 100 of them.
    let mut reads = Vec::new();
    for n in [2_000i64, 20_000] {
        let db = clocked_db(n);
        let mut clock = n;
        for expiring in [1i64, 10, 100] {
            let before = db.tuples(&db.head().unwrap(), "recent").unwrap().len() as i64;
            clock += expiring;
            let stats = commit_at(&db, "", clock);
            let after = db.tuples(&db.head().unwrap(), "recent").unwrap().len() as i64;
            assert_eq!(before - after, expiring, "n = {n}");
            // The crossing index's front: the rows that leave, and the first that stays
            // (where the read stops); counting then looks up each one's derivation count.
            let window = operator_stat(&stats, "time-window");
            assert_eq!(
                window.entries_read,
                expiring as u64 + 1,
                "n = {n}: {stats:?}"
            );
            let counting = operator_stat(&stats, "counting");
            assert!(
                counting.entries_read <= expiring as u64,
                "n = {n}: {stats:?}"
            );
            reads.push((n, expiring, window.entries_read + counting.entries_read));
        }
        // An insert at a standing clock is O(Δ): it reads no index entry at all.
        let stats = commit_at(&db, &format!("+orders_at({}, {clock})", n + 1), clock);
        assert!(
            stats.iter().all(|s| s.operator != "time-window"),
            "{stats:?}"
        );
        assert!(
            operator_stat(&stats, "counting").entries_read <= 1,
            "{stats:?}"
        );
        assert!(db
            .verify(&db.head().unwrap())
            .unwrap()
            .mismatches
            .is_empty());
    }
    // Entries read follow E, not the window (W = 1,000 or 10,000) nor the orders (N).
    let small: Vec<u64> = reads.iter().filter(|r| r.0 == 2_000).map(|r| r.2).collect();
    let large: Vec<u64> = reads
        .iter()
        .filter(|r| r.0 == 20_000)
        .map(|r| r.2)
        .collect();
    assert_eq!(small, large, "{reads:?}");
}
