//! `rnt alter` end to end: every form, every refusal (exit code, message, HEAD unchanged),
//! the program rewritten with the relation, views over it kept current and everything else
//! keeping its trees, earlier states read back with their own schema, and `define`'s
//! refusal naming the `rnt alter` command.

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const PROGRAM: &str = "\
relation orders(id: int, customer: int, amount: int) key(id).
relation customers(id: int, plan: str).
relation notes(n: int, text: str).
view total(c: int, t: int).
total(c, sum(a)) :- orders(_, c, a).
view pro(c: int).
pro(c) :- customers(c, \"pro\").
view buyers(c: int).
buyers(c) :- orders(customer: c).
view counted(n: int, k: int).
counted(n, count()) :- notes(n, _).
denial negative(i: int).
negative(i) :- orders(id: i, amount: a), a < 0.
";

/// A store with PROGRAM defined and a few tuples in every base relation.
fn shop() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit(
        "data",
        &[
            "+orders(1, 7, 30)",
            "+orders(2, 7, 12)",
            "+orders(3, 8, 5)",
            "+customers(7, \"pro\")",
            "+customers(8, \"free\")",
            "+notes(1, \"a\")",
            "+notes(1, \"b\")",
            "+notes(2, \"c\")",
        ],
    );
    shop
}

/// Every relation's root in the head's state, by name.
fn roots(shop: &Shop) -> BTreeMap<String, Value> {
    let status = shop.status();
    let relations = status["relations"].as_array().expect("relations");
    relations
        .iter()
        .map(|r| {
            (
                r["name"].as_str().expect("name").to_string(),
                r["root"].clone(),
            )
        })
        .collect()
}

/// Asserts `alter` fails with `code`, its one error line holding `needles`, HEAD unchanged.
fn refused(shop: &Shop, args: &[&str], code: i32, needles: &[&str]) {
    let head = shop.head();
    let mut full = vec!["alter"];
    full.extend_from_slice(args);
    let stderr = shop.fails(&full, code);
    if code == 1 {
        assert_one_line_error(&stderr, needles);
    } else {
        for needle in needles {
            assert!(stderr.contains(needle), "{needle:?} not in {stderr:?}");
        }
    }
    assert_eq!(shop.head(), head, "a refused alter moved HEAD");
}

/// Asserts `rnt verify` passes.
fn verified(shop: &Shop) {
    shop.ok(&["verify"]);
}

#[test]
fn add_fills_null_or_the_default_and_keeps_what_does_not_read_the_relation() {
    let shop = shop();
    let before = roots(&shop);
    shop.ok(&["alter", "orders", "add", "note", "str?"]);
    verified(&shop);
    let after = roots(&shop);
    for kept in ["customers", "notes", "pro", "counted", "total", "buyers"] {
        assert_eq!(before[kept], after[kept], "{kept} kept its tree");
    }
    assert_ne!(before["orders"], after["orders"]);
    assert_eq!(
        shop.rows("orders", None)[0],
        vec![json!(1), json!(7), json!(30), Value::Null]
    );
    let program = shop.ok(&["program"]);
    assert!(
        program.contains("total(c, sum(a)) :- orders(_, c, a, _)."),
        "{program}"
    );
    assert!(program.contains("orders(customer: c)"), "{program}");
    shop.ok(&[
        "alter",
        "orders",
        "add",
        "qty",
        "int",
        "--default",
        "1",
        "-m",
        "qty",
    ]);
    assert_eq!(shop.log()[0]["message"], "qty");
    assert_eq!(
        shop.rows("orders", None)[2],
        vec![json!(3), json!(8), json!(5), Value::Null, json!(1)]
    );
    verified(&shop);
    // The earlier states keep their schema.
    assert_eq!(
        shop.rows("orders", Some("HEAD~2"))[0],
        vec![json!(1), json!(7), json!(30)]
    );
    let old = shop.ok(&["program", "--at", "HEAD~2"]);
    assert!(
        old.contains("orders(id: int, customer: int, amount: int) key(id)."),
        "{old}"
    );
    shop.ok(&["verify", "--at", "HEAD~2"]);
}

#[test]
fn add_refuses_a_column_that_cannot_be_filled() {
    let shop = shop();
    refused(&shop, &["orders", "add", "qty", "int"], 1, &["--default"]);
    refused(
        &shop,
        &["orders", "add", "qty", "int", "--default", "\"x\""],
        1,
        &["must be int"],
    );
    refused(
        &shop,
        &["orders", "add", "amount", "int?"],
        1,
        &["already has a column `amount`"],
    );
    refused(
        &shop,
        &["orders", "add", "qty", "integer"],
        1,
        &["not a column type"],
    );
    refused(
        &shop,
        &["nope", "add", "qty", "int?"],
        1,
        &["unknown relation `nope`"],
    );
    refused(&shop, &["total", "add", "qty", "int?"], 1, &["is a view"]);
}

#[test]
fn drop_loses_the_wildcard_merges_equal_tuples_and_refuses_a_column_a_rule_reads() {
    let shop = shop();
    let run = shop.run(&["alter", "notes", "drop", "text"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("1 tuples merged"), "{}", run.stderr);
    assert_eq!(
        shop.rows("notes", None),
        vec![vec![json!(1)], vec![json!(2)]]
    );
    assert!(shop
        .ok(&["program"])
        .contains("counted(n, count()) :- notes(n)."));
    assert_eq!(
        shop.rows("counted", None),
        vec![vec![json!(1), json!(1)], vec![json!(2), json!(1)]]
    );
    verified(&shop);
    refused(
        &shop,
        &["orders", "drop", "amount"],
        1,
        &["negative(i) :- ", "reads it"],
    );
    refused(&shop, &["orders", "drop", "id"], 1, &["in the key"]);
    refused(&shop, &["orders", "drop", "nope"], 1, &["no column `nope`"]);
    refused(&shop, &["notes", "drop", "n"], 1, &["only column"]);
}

#[test]
fn a_denial_refuses_an_alter_with_exit_2() {
    let shop = shop();
    let program =
        format!("{PROGRAM}denial lonely(n: int).\nlonely(n) :- counted(n, k), n = 1, k < 2.\n");
    shop.write("p2.rnt", &program);
    shop.ok(&["define", "p2.rnt"]);
    refused(&shop, &["notes", "drop", "text"], 2, &["lonely"]);
}

#[test]
fn rename_and_rename_to_carry_the_rules_along() {
    let shop = shop();
    let before = roots(&shop);
    shop.ok(&["alter", "orders", "rename", "customer", "buyer"]);
    assert_eq!(
        roots(&shop)["orders"],
        before["orders"],
        "a rename keeps the tuples' bytes"
    );
    let program = shop.ok(&["program"]);
    assert!(
        program.contains("buyers(c) :- orders(buyer: c)."),
        "{program}"
    );
    refused(
        &shop,
        &["orders", "rename", "buyer", "amount"],
        1,
        &["already has a column"],
    );
    shop.ok(&["alter", "orders", "rename-to", "sales"]);
    let program = shop.ok(&["program"]);
    assert!(
        !program.contains("orders") && program.contains("total(c, sum(a)) :- sales(_, c, a)."),
        "{program}"
    );
    assert_eq!(roots(&shop)["sales"], before["orders"]);
    assert_eq!(shop.rows("sales", None).len(), 3);
    assert_eq!(shop.rows("orders", Some("HEAD~2")).len(), 3);
    verified(&shop);
    refused(&shop, &["sales", "rename-to", "customers"], 1, &["exists"]);
    shop.commit("more", &["+sales(4, 8, 1)"]);
    assert_eq!(
        shop.rows("total", None),
        vec![vec![json!(7), json!(42)], vec![json!(8), json!(6)]]
    );
}

#[test]
fn type_widens_the_column_and_the_views_that_take_it() {
    let shop = shop();
    shop.ok(&["alter", "orders", "type", "amount", "decimal(10, 2)"]);
    assert!(shop
        .ok(&["program"])
        .contains("view total(c: int, t: decimal(38, 2))."));
    assert_eq!(shop.rows("total", None)[0], vec![json!(7), json!("42.00")]);
    verified(&shop);
    refused(
        &shop,
        &["orders", "type", "amount", "int"],
        1,
        &["not a widening"],
    );
    refused(
        &shop,
        &["orders", "type", "amount", "decimal(10, 1)"],
        1,
        &["not a widening"],
    );
    refused(
        &shop,
        &["orders", "type", "id", "decimal(1, 1)"],
        1,
        &["stored value"],
    );
    shop.ok(&["alter", "customers", "type", "plan", "str?"]);
    shop.commit("null plan", &["+customers(9, null)"]);
    verified(&shop);
}

#[test]
fn key_is_checked_against_the_data_listing_at_most_ten_duplicates() {
    let shop = shop();
    refused(
        &shop,
        &["orders", "key", "customer"],
        1,
        &["customer=7 (2 tuples)"],
    );
    let mut changes: Vec<String> = (0..12)
        .map(|i| format!("+notes({}, \"x\")", 10 + i))
        .collect();
    changes.extend((0..12).map(|i| format!("+notes({}, \"y\")", 10 + i)));
    let changes: Vec<&str> = changes.iter().map(String::as_str).collect();
    shop.commit("pairs", &changes);
    refused(
        &shop,
        &["notes", "key", "n"],
        1,
        &["13 keys are held", "and 3 more"],
    );
    shop.ok(&["alter", "customers", "key", "id"]);
    assert!(shop
        .ok(&["program"])
        .contains("customers(id: int, plan: str) key(id)."));
    shop.fails(
        &[
            "commit",
            "-m",
            "dup",
            "+customers(7, \"free\")",
            "+customers(7, \"x\")",
        ],
        1,
    );
    shop.ok(&["alter", "orders", "key", "--none"]);
    assert!(shop
        .ok(&["program"])
        .contains("orders(id: int, customer: int, amount: int).\n"));
    verified(&shop);
}

#[test]
fn drop_relation_needs_no_reader_and_define_names_the_alter_that_does_it() {
    let shop = shop();
    refused(
        &shop,
        &["customers", "drop-relation"],
        1,
        &["pro(c) :- customers(c, \"pro\").", "reads it"],
    );
    let without_notes = PROGRAM
        .lines()
        .filter(|l| !l.contains("notes") && !l.contains("counted"))
        .collect::<Vec<_>>()
        .join("\n");
    shop.write("p2.rnt", &without_notes);
    let stderr = shop.fails(&["define", "p2.rnt"], 1);
    assert!(stderr.contains("rnt alter notes drop-relation"), "{stderr}");
    let changed = PROGRAM.replace("key(id)", "key(customer)");
    shop.write("p3.rnt", &changed);
    let stderr = shop.fails(&["define", "p3.rnt"], 1);
    assert!(stderr.contains("rnt alter orders key"), "{stderr}");
    // With `counted` gone, nothing reads `notes`.
    let without_counted = PROGRAM
        .lines()
        .filter(|l| !l.contains("counted"))
        .collect::<Vec<_>>()
        .join("\n");
    shop.write("p4.rnt", &without_counted);
    shop.ok(&["define", "p4.rnt"]);
    shop.ok(&["alter", "notes", "drop-relation"]);
    assert!(!roots(&shop).contains_key("notes"));
    assert_eq!(shop.rows("notes", Some("HEAD~1")).len(), 3);
    verified(&shop);
}

#[test]
fn an_alter_and_its_inverse_give_back_the_state() {
    let shop = shop();
    let state = shop.state();
    shop.ok(&["alter", "orders", "add", "x", "int?"]);
    shop.ok(&["alter", "orders", "drop", "x"]);
    assert_eq!(shop.state(), state);
    shop.ok(&["alter", "orders", "rename-to", "sales"]);
    shop.ok(&["alter", "sales", "rename-to", "orders"]);
    assert_eq!(shop.state(), state);
}

#[test]
fn log_marks_alter_commits_and_diff_across_one_notes_it() {
    let shop = shop();
    shop.ok(&[
        "alter",
        "orders",
        "add",
        "note",
        "str?",
        "-m",
        "notes for orders",
    ]);
    let log = shop.ok(&["log"]);
    let first = log.lines().nth(1).expect("a commit line");
    assert!(
        first.contains("notes for orders") && first.ends_with("alter: orders"),
        "{log}"
    );
    assert!(
        !log.lines()
            .nth(2)
            .expect("the data commit")
            .contains("alter:"),
        "{log}"
    );
    assert!(shop.ok(&["log", "--graph"]).contains("[alter: orders]"));
    let run = shop.run(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("+orders(1, 7, 30, null)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(
            "note: the schema of `orders` differs (rnt alter): relation orders(id: int, customer: int, amount: int) key(id). → relation orders(id: int, customer: int, amount: int, note: str?) key(id)."
        ),
        "{}",
        run.stderr
    );
    // A define that only adds a view changes no schema: no mark.
    shop.write(
        "p2.rnt",
        &format!(
            "{}view all(i: int).\nall(i) :- orders(id: i).\n",
            shop.ok(&["program"])
        ),
    );
    shop.ok(&["define", "p2.rnt"]);
    assert!(!shop.ok(&["log", "-n", "1"]).contains("alter:"));
}

#[test]
fn every_form_refuses_an_unknown_relation_and_an_unknown_column() {
    let shop = shop();
    let forms: [&[&str]; 5] = [
        &["drop", "nope"],
        &["rename", "nope", "x"],
        &["type", "nope", "int?"],
        &["key", "id", "nope"],
        &["key", "nope"],
    ];
    for form in forms {
        let args = [&["orders"][..], form].concat();
        refused(
            &shop,
            &args,
            1,
            &["`orders` has no column `nope`", "id, customer, amount"],
        );
    }
    let forms: [&[&str]; 7] = [
        &["add", "x", "int?"],
        &["drop", "id"],
        &["rename", "id", "x"],
        &["rename-to", "x"],
        &["type", "id", "int?"],
        &["key", "--none"],
        &["drop-relation"],
    ];
    for form in forms {
        let args = [&["nope"][..], form].concat();
        refused(&shop, &args, 1, &["unknown relation `nope`"]);
    }
}

#[test]
fn a_drop_recomputes_a_window_whose_ties_the_dropped_column_ordered() {
    let shop = Shop::init();
    shop.write(
        "w.rnt",
        "relation t(p: int, d: int, e: int, o: int).
view w(p: int, e: int, n: int).
w(p, e, n) :- t(p, _, e, o), n = row_number() over (partition p order o).
",
    );
    shop.ok(&["define", "w.rnt"]);
    shop.commit("data", &["+t(1, 1, 5, 0)", "+t(1, 2, 3, 0)"]);
    // Tied on `o`: ordered by the remaining columns, `d` first.
    assert_eq!(
        shop.rows("w", None),
        vec![
            vec![json!(1), json!(3), json!(2)],
            vec![json!(1), json!(5), json!(1)]
        ]
    );
    shop.ok(&["alter", "t", "drop", "d"]);
    // Now `e` breaks the tie.
    assert_eq!(
        shop.rows("w", None),
        vec![
            vec![json!(1), json!(3), json!(1)],
            vec![json!(1), json!(5), json!(2)]
        ]
    );
    verified(&shop);
}

#[test]
fn a_default_is_written_as_a_change_file_writes_a_value() {
    let shop = shop();
    shop.ok(&[
        "alter",
        "customers",
        "add",
        "tag",
        "str",
        "--default",
        "\"none\"",
    ]);
    shop.ok(&[
        "alter",
        "customers",
        "add",
        "rate",
        "decimal(5, 2)",
        "--default",
        "12.50",
    ]);
    shop.ok(&[
        "alter",
        "customers",
        "add",
        "gone",
        "int?",
        "--default",
        "null",
    ]);
    shop.ok(&["alter", "customers", "add", "neg", "int", "--default", "-3"]);
    assert_eq!(
        shop.rows("customers", None)[0],
        vec![
            json!(7),
            json!("pro"),
            json!("none"),
            json!("12.50"),
            Value::Null,
            json!(-3)
        ]
    );
    refused(
        &shop,
        &["customers", "add", "x", "int", "--default", "null"],
        1,
        &["null"],
    );
    verified(&shop);
}

#[test]
fn a_new_name_must_be_a_name() {
    let shop = shop();
    for bad in ["x y", "9x", "x-y", "_", ""] {
        let needle = format!("`{bad}` is not a name");
        refused(&shop, &["orders", "add", bad, "int?"], 1, &[&needle]);
        refused(&shop, &["orders", "rename", "amount", bad], 1, &[&needle]);
        refused(&shop, &["orders", "rename-to", bad], 1, &[&needle]);
    }
    shop.ok(&["alter", "orders", "rename", "amount", "_amount2"]);
    verified(&shop);
}

#[test]
fn log_marks_an_alter_of_a_relation_that_holds_no_tuples() {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation empty(id: int).\nrelation other(x: int).\n",
    );
    shop.ok(&["define", "p.rnt"]);
    shop.commit("data", &["+other(1)"]);
    shop.ok(&["alter", "empty", "add", "note", "str?", "-m", "widen it"]);
    let log = shop.ok(&["log"]);
    let first = log.lines().nth(1).expect("a commit line");
    assert!(first.ends_with("alter: empty"), "{log}");
    shop.ok(&["alter", "empty", "rename-to", "renamed", "-m", "rename it"]);
    let log = shop.ok(&["log"]);
    assert!(
        log.lines().nth(1).unwrap().ends_with("alter: empty"),
        "{log}"
    );
    // A commit of tuples alone is no schema change.
    assert!(!log.lines().nth(3).unwrap().contains("alter:"), "{log}");
}
