//! Guards each language feature of the engine against relations written out by hand:
//! joins, projections with duplicates, negation, recursion with cycles, aggregates,
//! arithmetic and its errors, ephemeral reads, denials at define and at commit.

use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, DbError, Value};
use rnt_store::MemoryStore;
use std::sync::Arc;

const PROGRAM: &str = r#"
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
view order_plan(id: int, plan: str).
view plan_total(plan: str, total: int, n: int).
view reach(x: int, y: int).
view customer_ids(c: int).
view stats(plan: str, lo: int, hi: int, mean: int).
ephemeral big_order(id: int).
view big_plans(plan: str).
denial orphan(id: int).

order_plan(i, p) :- orders(i, c, _), customers(c, p).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
customer_ids(c) :- orders(_, c, _).
stats(p, min(a), max(a), avg(a)) :- orders(_, c, a), customers(c, p).
big_order(i) :- orders(i, _, a), a > 900.
big_plans(p) :- big_order(i), order_plan(i, p).
orphan(i) :- orders(i, c, _), not customers(c, _).
"#;

fn db() -> Database {
    Database::new(Arc::new(MemoryStore::new()))
}

fn commit(db: &Database, text: &str) -> Result<CommitOutcome, DbError> {
    db.commit(parse_changes(text, None).expect("parse"), "test", None)
}

fn show(db: &Database, relation: &str) -> Vec<String> {
    let head = db.head().unwrap();
    db.tuples(&head, relation)
        .unwrap()
        .iter()
        .map(|t| t.iter().map(Value::to_string).collect::<Vec<_>>().join(","))
        .collect()
}

fn setup() -> Database {
    let db = db();
    db.define(PROGRAM, "p.rnt", "define").unwrap();
    commit(
        &db,
        r#"
        +customers(1, "free")
        +customers(2, "pro")
        +orders(10, 1, 5)
        +orders(11, 2, 950)
        +orders(12, 2, 40)
        +orders(13, 1, 5)
        +edge(1, 2)
        +edge(2, 3)
        +edge(3, 1)
        +edge(4, 5)
    "#,
    )
    .unwrap();
    db
}

#[test]
fn joins_and_projections() {
    let db = setup();
    assert_eq!(
        show(&db, "order_plan"),
        ["10,\"free\"", "11,\"pro\"", "12,\"pro\"", "13,\"free\""]
    );
    // Two orders of customer 1 project to one tuple.
    assert_eq!(show(&db, "customer_ids"), ["1", "2"]);
}

#[test]
fn aggregates_range_over_every_match() {
    let db = setup();
    // Orders 10 and 13 have equal amounts; both count.
    assert_eq!(show(&db, "plan_total"), ["\"free\",10,2", "\"pro\",990,2"]);
    assert_eq!(show(&db, "stats"), ["\"free\",5,5,5", "\"pro\",40,950,495"]);
}

#[test]
fn recursion_with_a_cycle() {
    let db = setup();
    let reach = show(&db, "reach");
    let mut want: Vec<String> = Vec::new();
    for x in 1..=3 {
        for y in 1..=3 {
            want.push(format!("{x},{y}"));
        }
    }
    want.push("4,5".into());
    assert_eq!(reach, want);
    // Cutting the cycle shrinks it.
    commit(&db, "-edge(3, 1)").unwrap();
    assert_eq!(show(&db, "reach"), ["1,2", "1,3", "2,3", "4,5"]);
}

#[test]
fn ephemeral_relations_are_evaluated_when_read() {
    let db = setup();
    assert_eq!(show(&db, "big_order"), ["11"]);
    assert_eq!(show(&db, "big_plans"), ["\"pro\""]);
    let status = db.head().unwrap();
    assert!(status.entry("big_order").unwrap().root.is_none());
}

#[test]
fn commits_recompute_views() {
    let db = setup();
    commit(&db, "-orders(11, 2, 950)\n+orders(14, 1, 7)").unwrap();
    assert_eq!(show(&db, "plan_total"), ["\"free\",17,3", "\"pro\",40,1"]);
    assert!(show(&db, "big_plans").is_empty());
}

#[test]
fn denials_refuse_commits_whole() {
    let db = setup();
    let before = db.head_commit().unwrap();
    let err = commit(&db, "+orders(99, 42, 1)\n+customers(3, \"x\")").unwrap_err();
    match err {
        DbError::DenialViolated {
            denial, witness, ..
        } => {
            assert_eq!(denial, "orphan");
            assert_eq!(witness, "orphan(99)");
        }
        other => panic!("expected a denial, got {other}"),
    }
    assert_eq!(db.head_commit().unwrap(), before);
    assert_eq!(show(&db, "customers").len(), 2);
}

#[test]
fn denials_refuse_programs_the_data_violates() {
    let db = db();
    db.define("relation r(x: int).", "a.rnt", "d").unwrap();
    commit(&db, "+r(5)").unwrap();
    let err = db
        .define(
            "relation r(x: int).\ndenial big(x: int).\nbig(x) :- r(x), x > 3.",
            "b.rnt",
            "d",
        )
        .unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert_eq!(err.to_string(), "denial big violated by big(5)");
}

#[test]
fn arithmetic_overflow_refuses_naming_the_rule() {
    let db = db();
    db.define(
        "relation r(x: int).\nview s(y: int).\ns(y) :- r(x), y = x * 2.",
        "a.rnt",
        "d",
    )
    .unwrap();
    commit(&db, "+r(4)").unwrap();
    assert_eq!(show(&db, "s"), ["8"]);
    let err = commit(&db, "+r(9223372036854775807)").unwrap_err();
    assert_eq!(err.exit_code(), 1);
    assert!(err.to_string().contains("integer overflow"), "{err}");
    assert!(err.to_string().contains("s(y) :- "), "{err}");
    assert_eq!(show(&db, "r"), ["4"]);
}

#[test]
fn division_truncates_toward_zero_and_by_zero_is_an_error() {
    let db = db();
    db.define("relation r(x: int).\nview q(x: int, d: int, m: int).\nq(x, d, m) :- r(x), d = x / 2, m = x % 2.", "a.rnt", "d").unwrap();
    commit(&db, "+r(-7)\n+r(7)").unwrap();
    assert_eq!(show(&db, "q"), ["-7,-3,-1", "7,3,1"]);
    db.define(
        "relation r(x: int).\nview q(x: int, d: int).\nq(x, d) :- r(x), d = 10 / x.",
        "b.rnt",
        "d",
    )
    .unwrap();
    let err = commit(&db, "+r(0)").unwrap_err();
    assert!(err.to_string().contains("division by zero"), "{err}");
}

#[test]
fn maintained_views_equal_recomputed_by_address() {
    let db = setup();
    let steps = [
        "-orders(11, 2, 950)\n+orders(14, 1, 7)",
        "-edge(3, 1)\n+edge(5, 6)",
        "-customers(2, \"pro\")\n+customers(2, \"team\")",
        "+edge(6, 4)\n-edge(1, 2)",
        "-orders(10, 1, 5)\n-orders(13, 1, 5)",
        "+orders(20, 2, 1000)\n+orders(21, 2, 1)",
    ];
    for step in steps {
        commit(&db, step).unwrap();
        let report = db.verify(&db.head().unwrap()).unwrap();
        assert!(
            report.mismatches.is_empty(),
            "after {step:?}: {:#?}",
            report.mismatches
        );
        assert!(report.checked.contains(&"reach".to_string()));
    }
}

#[test]
fn ad_hoc_queries_infer_their_heads() {
    let db = setup();
    let head = db.head().unwrap();
    let answer = db
        .query(&head, "q(i, p) :- order_plan(i, p), p = \"pro\".")
        .unwrap();
    assert_eq!(
        answer
            .schema
            .attributes
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        ["i", "p"]
    );
    assert_eq!(answer.tuples.len(), 2);
    let answer = db.query(&head, "t(c, sum(a)) :- orders(_, c, a).").unwrap();
    assert_eq!(
        answer.tuples,
        vec![
            vec![Value::Int(1), Value::Int(10)],
            vec![Value::Int(2), Value::Int(990)]
        ]
    );
    let answer = db
        .query(
            &head,
            "d(x, y) :- r2(x, y), x < y.\nr2(x, z) :- edge(x, y), edge(y, z).",
        )
        .unwrap();
    assert_eq!(answer.tuples, vec![vec![Value::Int(1), Value::Int(3)]]);
    assert!(db.query(&head, "q(x) :- nosuch(x).").is_err());
    assert!(db.query(&head, "q(x :- orders(x).").is_err());
}

#[test]
fn redefining_keeps_unchanged_views_and_recomputes_changed_ones() {
    let db = setup();
    let before = db.head().unwrap();
    let mut computed = Vec::new();
    let extended = format!("{PROGRAM}\nrelation notes(n: int).\nview big_total(t: int).\nbig_total(sum(a)) :- orders(_, _, a), a > 100.\n");
    db.define_with_progress(&extended, "p2.rnt", "more", &mut |line| {
        computed.push(line.to_string())
    })
    .unwrap();
    assert_eq!(computed, ["computing view big_total (1/1)"]);
    let after = db.head().unwrap();
    for view in ["order_plan", "plan_total", "reach", "stats"] {
        assert_eq!(
            before.entry(view).unwrap().root,
            after.entry(view).unwrap().root,
            "{view}"
        );
    }
    assert_eq!(show(&db, "big_total"), ["950"]);
    // Changing a rule recomputes that view and those reading it.
    let changed = extended.replace("a > 900", "a > 30");
    let mut computed = Vec::new();
    db.define_with_progress(&changed, "p3.rnt", "change", &mut |line| {
        computed.push(line.to_string())
    })
    .unwrap();
    assert_eq!(computed, ["computing view big_plans (1/1)"]);
    assert_eq!(show(&db, "big_plans"), ["\"pro\""]);
    assert!(db
        .verify(&db.head().unwrap())
        .unwrap()
        .mismatches
        .is_empty());
    // The same program again changes nothing.
    assert_eq!(
        db.define(&changed, "p3.rnt", "again").unwrap(),
        CommitOutcome::NothingToCommit
    );
}

#[test]
fn min_and_max_over_strings_follow_deletions_of_the_extremes() {
    let db = db();
    db.define(
        "relation tag(g: int, t: str, on: bool).\nview span(g: int, lo: str, hi: str, n: int).\nspan(g, min(t), max(t), count()) :- tag(g, t, true).\nview flags(on: bool, n: int).\nflags(on, count()) :- tag(_, _, on).",
        "tags.rnt",
        "define",
    )
    .unwrap();
    commit(&db, "+tag(1, \"b\", true)\n+tag(1, \"a\", true)\n+tag(1, \"c\", true)\n+tag(1, \"ab\", false)\n+tag(2, \"\", true)\n+tag(2, \"zz\", true)").unwrap();
    assert_eq!(show(&db, "span"), ["1,\"a\",\"c\",3", "2,\"\",\"zz\",2"]);
    assert_eq!(show(&db, "flags"), ["false,1", "true,5"]);
    let steps = [
        (
            "-tag(1, \"a\", true)",
            vec!["1,\"b\",\"c\",2", "2,\"\",\"zz\",2"],
        ),
        (
            "-tag(1, \"c\", true)\n+tag(1, \"d\", true)",
            vec!["1,\"b\",\"d\",2", "2,\"\",\"zz\",2"],
        ),
        (
            "-tag(2, \"\", true)\n-tag(2, \"zz\", true)",
            vec!["1,\"b\",\"d\",2"],
        ),
        (
            "+tag(2, \"m\", true)\n-tag(1, \"ab\", false)\n+tag(1, \"ab\", true)",
            vec!["1,\"ab\",\"d\",3", "2,\"m\",\"m\",1"],
        ),
    ];
    for (change, want) in steps {
        commit(&db, change).unwrap();
        assert_eq!(show(&db, "span"), want, "after {change}");
        let report = db.verify(&db.head().unwrap()).unwrap();
        assert!(
            report.mismatches.is_empty(),
            "after {change}: {:?}",
            report.mismatches
        );
    }
    assert_eq!(show(&db, "flags"), ["true,4"]);
}

#[test]
fn verify_reports_progress_view_by_view() {
    let db = setup();
    let head = db.head().unwrap();
    let mut lines = Vec::new();
    let report = db
        .verify_with_progress(&head, &mut |line| lines.push(line.to_string()))
        .unwrap();
    assert!(report.mismatches.is_empty());
    // One line per materialized view, in stratum order, counting up to the total.
    let views = [
        "order_plan",
        "plan_total",
        "reach",
        "customer_ids",
        "stats",
        "big_plans",
    ];
    assert_eq!(lines.len(), views.len(), "{lines:?}");
    for view in views {
        assert!(
            lines.iter().any(|l| l.contains(view)),
            "{view} in {lines:?}"
        );
    }
    assert!(lines
        .last()
        .unwrap()
        .ends_with(&format!("({n}/{n})", n = views.len())));
}

/// A commit of enough edits for a relation's indexes to be edited beside its tree, some of
/// which change nothing (an insert of a present tuple, a delete of an absent one): the
/// indexes follow what changed — a count index counts no phantom tuple — and the state is
/// the one the same commit without those edits makes.
#[test]
fn indexes_edited_beside_an_edit_follow_what_changed() {
    let program = "relation orders(id: int, customer: int, amount: int).
        relation customers(id: int, plan: str).
        view plan_customers(plan: str, n: int).
        plan_customers(p, count_distinct(c)) :- orders(_, c, _), customers(c, p).";
    let start = "+customers(1, \"free\")\n+customers(2, \"pro\")\n+orders(10, 1, 5)\n";
    let mut changes = String::new();
    for i in 100..130 {
        changes.push_str(&format!("+orders({i}, {}, {i})\n", 1 + i % 2));
    }
    let states: Vec<_> = [
        changes.clone(),
        format!("{changes}+orders(10, 1, 5)\n-orders(999, 2, 1)\n"),
    ]
    .iter()
    .map(|text| {
        let db = db();
        db.define(program, "p.rnt", "define").unwrap();
        commit(&db, start).unwrap();
        commit(&db, text).unwrap();
        let head = db.head().unwrap();
        assert!(db.verify(&head).unwrap().mismatches.is_empty());
        head.state_address
    })
    .collect();
    assert_eq!(states[0], states[1]);
}
