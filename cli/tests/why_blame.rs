//! End to end: `rnt why` and `rnt blame` (issue 26, item 3; docs/design.md "Provenance") —
//! a derivation down to base tuples for each maintained kind (counting, an aggregate's
//! matches up to `--limit`, a shortest derivation of a recursive view, a window's deciding
//! rows, a `not` and an `optional` atom's missing match), each base tuple with the commit
//! that last wrote it, in the table and in JSON, at any `--at`; `blame` of a relation or a
//! tuple, following a merge into the branch that wrote a tuple; every error with its exit
//! code, writing nothing.

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::{json, Value};

const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation orders(id: int, customer: int, amount: int).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int).
plan_total(p, sum(a)) :- orders(_, c, a), customers(c, p).
view top2(customer: int, id: int, k: int).
top2(c, i, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 2.
view next_order(customer: int, id: int, next: int).
next_order(c, i, n) :- orders(i, c, _), n = lead(i, 1, 0) over (partition c order i).
view with_plan(id: int, plan: str?).
with_plan(i, p) :- orders(i, c, _), optional customers(c, p).
view unknown(id: int).
unknown(i) :- orders(i, c, _), not customers(c, _).
relation edge(src: int, dst: int).
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
ephemeral big(id: int).
big(i) :- orders(i, _, a), a > 100.
denial negative(id: int).
negative(i) :- orders(i, _, a), a < 0.
";

/// Three commits: customers, orders, edges (a chain 1→2→3→4 with a shortcut 1→3).
fn shop() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit(
        "customers",
        &["+customers(7, \"pro\")", "+customers(8, \"free\")"],
    );
    shop.commit(
        "orders",
        &[
            "+orders(1, 7, 30)",
            "+orders(2, 7, 120)",
            "+orders(3, 7, 60)",
            "+orders(4, 9, 5)",
        ],
    );
    shop.commit(
        "edges",
        &["+edge(1, 2)", "+edge(2, 3)", "+edge(3, 4)", "+edge(1, 3)"],
    );
    shop
}

fn short(shop: &Shop, reference: &str) -> String {
    let log: Vec<Value> =
        serde_json::from_str(&shop.ok(&["log", reference, "--format", "json", "-n", "1"])).unwrap();
    log[0]["commit"].as_str().unwrap()[..12].to_string()
}

#[test]
fn a_join_row_is_its_rule_instance_with_each_base_tuples_commit() {
    let shop = shop();
    let (customers, orders) = (short(&shop, "HEAD~2"), short(&shop, "HEAD~1"));
    assert_eq!(
        shop.ok(&["why", "order_plan(2, \"pro\")"]),
        format!(
            "\
order_plan(2, \"pro\")
  by order_plan(i, p) :- customers(c, p), orders(i, c, _).  with i = 2, p = \"pro\", c = 7
    customers(7, \"pro\")  written by {customers} (customers)
    orders(2, 7, 120)  written by {orders} (orders)
"
        )
    );
    // Named arguments, and a base tuple on its own.
    assert_eq!(
        shop.ok(&["why", "order_plan(plan: \"pro\", id: 2)"]),
        shop.ok(&["why", "order_plan(2, \"pro\")"])
    );
    assert_eq!(
        shop.ok(&["why", "orders(4, 9, 5)"]),
        format!("orders(4, 9, 5)  written by {orders} (orders)\n")
    );
    let tree: Value =
        serde_json::from_str(&shop.ok(&["why", "order_plan(2, \"pro\")", "--format", "json"]))
            .unwrap();
    let head = shop.log()[1]["commit"].as_str().unwrap().to_string();
    assert_eq!(
        tree,
        json!({
            "relation": "order_plan", "tuple": [2, "pro"], "derived": true, "commit": null,
            "instances": [{
                "rule": "order_plan(i, p) :- customers(c, p), orders(i, c, _).",
                "bindings": {"i": 2, "p": "pro", "c": 7},
                "body": [
                    {"relation": "customers", "tuple": [7, "pro"], "derived": false,
                     "commit": shop.log()[2]["commit"], "instances": [], "more": false},
                    {"relation": "orders", "tuple": [2, 7, 120], "derived": false,
                     "commit": head, "instances": [], "more": false},
                ],
                "window": null,
            }],
            "more": false,
        })
    );
}

#[test]
fn an_aggregate_lists_its_groups_matches_up_to_the_limit() {
    let shop = shop();
    let all = shop.ok(&["why", "plan_total(\"pro\", 210)"]);
    assert_eq!(all.matches("  by plan_total").count(), 3, "{all}");
    assert!(!all.contains("and more"), "{all}");
    let cut = shop.ok(&["why", "plan_total(\"pro\", 210)", "--limit", "2"]);
    assert_eq!(cut.matches("  by plan_total").count(), 2, "{cut}");
    assert!(cut.ends_with("  (and more: --limit N)\n"), "{cut}");
    let tree: Value = serde_json::from_str(&shop.ok(&[
        "why",
        "plan_total(\"pro\", 210)",
        "--limit",
        "1",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(tree["instances"].as_array().unwrap().len(), 1);
    assert_eq!(tree["more"], true);
}

#[test]
fn a_recursive_row_has_a_shortest_derivation() {
    let shop = shop();
    let out = shop.ok(&["why", "reach(1, 4)"]);
    // Through the shortcut 1→3: two levels, not three.
    assert_eq!(out.matches("  by reach").count(), 2, "{out}");
    assert!(out.contains("edge(1, 3)"), "{out}");
    assert!(!out.contains("edge(1, 2)"), "{out}");
}

#[test]
fn a_window_row_names_the_rows_that_decide_it() {
    let shop = shop();
    let out = shop.ok(&["why", "top2(7, 3, 2)"]);
    assert!(
        out.contains(
            "    k = rank() over (partition c order a desc) is 2, decided by 1 row of orders before it in window order:\n      orders(2, 7, 120)"
        ),
        "{out}"
    );
    let out = shop.ok(&["why", "next_order(7, 1, 2)"]);
    assert!(out.contains("decided by 1 row of orders after it"), "{out}");
    let tree: Value =
        serde_json::from_str(&shop.ok(&["why", "top2(7, 3, 2)", "--format", "json"])).unwrap();
    let window = &tree["instances"][0]["window"];
    assert_eq!(window["value"], 2);
    assert_eq!(window["relation"], "orders");
    assert_eq!(window["rows"][0]["tuple"], json!([2, 7, 120]));
    assert!(window["rows"][0]["commit"].is_string());
    assert_eq!(window["after"], false);
    assert_eq!(window["more"], false);
}

#[test]
fn a_missing_match_is_a_not() {
    let shop = shop();
    let out = shop.ok(&["why", "with_plan(4, null)"]);
    assert!(out.contains("    not customers(9, _)\n"), "{out}");
    let out = shop.ok(&["why", "unknown(4)"]);
    assert!(out.contains("    not customers(9, _)\n"), "{out}");
    let tree: Value =
        serde_json::from_str(&shop.ok(&["why", "unknown(4)", "--format", "json"])).unwrap();
    assert!(tree["instances"][0]["body"]
        .as_array()
        .unwrap()
        .contains(&json!({"absent": "customers(9, _)"})));
    // An ephemeral relation is explained as a view is.
    assert!(shop.ok(&["why", "big(2)"]).contains("orders(2, 7, 120)"));
}

#[test]
fn at_an_older_commit_the_writers_are_those_of_then() {
    let shop = shop();
    let orders = short(&shop, "HEAD~1");
    shop.commit("upgrade", &["+customers(7, \"team\")"]);
    let upgrade = short(&shop, "HEAD");
    assert!(shop
        .ok(&["why", "order_plan(2, \"team\")"])
        .contains(&format!(
            "customers(7, \"team\")  written by {upgrade} (upgrade)"
        )));
    let old = shop.ok(&["why", "order_plan(2, \"pro\")", "--at", "HEAD~1"]);
    assert!(
        old.contains(&format!("orders(2, 7, 120)  written by {orders}")),
        "{old}"
    );
    let stderr = shop.fails(&["why", "order_plan(2, \"pro\")"], 1);
    assert_one_line_error(&stderr, &["order_plan(2, \"pro\") is not in `order_plan`"]);
    // A state named by its hash has no history: the tree without commits.
    let state = shop.state();
    let out = shop.ok(&["why", "order_plan(2, \"team\")", "--at", &state]);
    assert!(out.contains("    customers(7, \"team\")\n"), "{out}");
}

#[test]
fn why_refuses_what_it_cannot_explain() {
    let shop = shop();
    let head = shop.head();
    let cases: [(&[&str], &[&str]); 8] = [
        (
            &["why", "order_plan(2, \"free\")"],
            &["is not in `order_plan`"],
        ),
        (&["why", "nosuch(1)"], &["unknown relation `nosuch`"]),
        (&["why", "negative(1)"], &["`negative` is a denial"]),
        (&["why", "order_plan(2)"], &["order_plan takes 2 values"]),
        (&["why", "order_plan(2, \"pro\""], &["the tuple"]),
        (&["why", "order_plan(2, 3)"], &["value 2 of order_plan"]),
        (
            &["why", "order_plan(2, \"pro\")", "--limit", "0"],
            &["--limit"],
        ),
        (
            &["why", "order_plan(2, \"pro\")", "--at", "nosuch"],
            &["nosuch"],
        ),
    ];
    for (args, needles) in cases {
        let stderr = shop.fails(args, 1);
        assert_one_line_error(&stderr, needles);
    }
    assert_eq!(shop.head(), head);
}

#[test]
fn blame_names_the_commit_that_last_wrote_each_tuple() {
    let shop = shop();
    let orders = short(&shop, "HEAD~1");
    shop.ok(&["branch", "side"]);
    shop.ok(&["switch", "side"]);
    shop.commit("side order", &["+orders(5, 8, 70)"]);
    let side = short(&shop, "HEAD");
    shop.ok(&["switch", "main"]);
    shop.commit("main order", &["+orders(6, 8, 80)", "-orders(4, 9, 5)"]);
    let main = short(&shop, "HEAD");
    shop.ok(&["merge", "side"]);
    let table = shop.ok(&["blame", "orders"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "id  customer  amount  commit        time                  message"
    );
    assert_eq!(lines.len(), 6, "{table}");
    assert!(
        lines[1].starts_with(&format!(" 1         7      30  {orders}")),
        "{table}"
    );
    // The merged branch's tuple is blamed on the branch's commit, not on the merge.
    assert!(
        lines[4].contains(&format!("{side}  ")) && lines[4].ends_with("side order"),
        "{table}"
    );
    assert!(
        lines[5].contains(&format!("{main}  ")) && lines[5].ends_with("main order"),
        "{table}"
    );
    let one: Value = serde_json::from_str(&shop.ok(&[
        "blame",
        "orders",
        "orders(5, 8, 70)",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["tuple"], json!([5, 8, 70]));
    assert!(one[0]["commit"].as_str().unwrap().starts_with(&side));
    assert_eq!(one[0]["message"], "side order");
    assert!(one[0]["time"].is_string());
    let all: Value =
        serde_json::from_str(&shop.ok(&["blame", "orders", "--format", "json"])).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 5);
    assert_eq!(all[3], one[0]);
    // --at starts from an older commit; a view's rows are blamed on the commits that
    // maintained them in.
    let old = shop.ok(&["blame", "orders", "--at", "HEAD~2"]);
    assert_eq!(old.lines().count(), 5, "{old}");
    assert!(shop.ok(&["blame", "order_plan"]).contains(&side));
}

#[test]
fn blame_refuses_what_has_no_history() {
    let shop = shop();
    let state = shop.state();
    let cases: [(&[&str], &[&str]); 6] = [
        (&["blame", "nosuch"], &["unknown relation `nosuch`"]),
        (&["blame", "big"], &["computed when read"]),
        (
            &["blame", "orders", "customers(7, \"pro\")"],
            &["of `customers`, not of `orders`"],
        ),
        (
            &["blame", "orders", "orders(9, 9, 9)"],
            &["is not in `orders`"],
        ),
        (&["blame", "orders", "--at", &state], &["named by its hash"]),
        (
            &["blame", "orders", "orders(1, 7)"],
            &["orders takes 3 values"],
        ),
    ];
    for (args, needles) in cases {
        let stderr = shop.fails(args, 1);
        assert_one_line_error(&stderr, needles);
    }
}
