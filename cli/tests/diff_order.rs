//! End to end: `diff` as a git or Dolt user reads it (issue 26, items 4 and 7) — `rnt diff
//! REF REL` when the second word is a relation (REL's changes in REF), an error when a name
//! is both a reference and a relation; each relation's changes in tuple order, a key's (an
//! aggregate view's group's) `-` before its `+`; and `--format json` in the same order.

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::json;

const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation tags(name: str, id: int) key(id).
relation orders(id: int, customer: int, amount: int).
view per_plan(plan: str, n: int).
per_plan(p, count()) :- customers(_, p).
view totals(total: int, customer: int).
totals(sum(a), c) :- orders(_, c, a).
ephemeral big(id: int, amount: int).
big(i, a) :- orders(i, _, a), a > 100.
";

fn shop() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit(
        "first",
        &[
            "+customers(1, \"b\")",
            "+customers(2, \"a\")",
            "+tags(\"z\", 1)",
            "+orders(1, 1, 50)",
            "+orders(2, 2, 500)",
        ],
    );
    // Updates that make each key's new tuple sort before its old one; an unkeyed relation
    // lists its changes in tuple order.
    shop.commit(
        "second",
        &[
            "+customers(1, \"a\")",
            "+tags(\"a\", 1)",
            "+customers(3, \"c\")",
            "+orders(3, 1, 10)",
            "-orders(2, 2, 500)",
            "+orders(4, 2, 120)",
        ],
    );
    shop
}

#[test]
fn a_keys_delete_comes_before_its_insert() {
    let shop = shop();
    assert_eq!(
        shop.ok(&["diff", "HEAD"]),
        "\
-customers(1, \"b\")
+customers(1, \"a\")
+customers(3, \"c\")
-orders(2, 2, 500)
+orders(3, 1, 10)
+orders(4, 2, 120)
-tags(\"z\", 1)
+tags(\"a\", 1)
"
    );
}

#[test]
fn an_aggregate_groups_delete_comes_before_its_insert() {
    let shop = shop();
    // per_plan's group is its first column, totals' its second.
    assert_eq!(
        shop.ok(&["diff", "HEAD~1", "HEAD", "per_plan"]),
        "-per_plan(\"a\", 1)\n+per_plan(\"a\", 2)\n-per_plan(\"b\", 1)\n+per_plan(\"c\", 1)\n"
    );
    assert_eq!(
        shop.ok(&["diff", "HEAD", "totals"]),
        "-totals(50, 1)\n+totals(60, 1)\n-totals(500, 2)\n+totals(120, 2)\n"
    );
    // An ephemeral relation is evaluated on both sides and sorted by tuple.
    assert_eq!(
        shop.ok(&["diff", "HEAD", "big"]),
        "-big(2, 500)\n+big(4, 120)\n"
    );
}

#[test]
fn ref_rel_is_the_relations_changes_in_ref() {
    let shop = shop();
    let by_name = shop.ok(&["diff", "HEAD", "per_plan"]);
    assert_eq!(by_name, shop.ok(&["diff", "HEAD~1", "HEAD", "per_plan"]));
    assert_eq!(
        shop.ok(&["diff", "HEAD~1", "customers"]),
        "+customers(1, \"b\")\n+customers(2, \"a\")\n"
    );
    // A relation the parent declares but REF dropped still names the relation.
    shop.write(
        "q.rnt",
        &PROGRAM.replace(
            "ephemeral big(id: int, amount: int).\nbig(i, a) :- orders(i, _, a), a > 100.\n",
            "",
        ),
    );
    shop.ok(&["define", "q.rnt"]);
    assert_eq!(shop.ok(&["diff", "HEAD", "per_plan"]), "");
    // Neither a reference nor a declared relation: the reference's error.
    let stderr = shop.fails(&["diff", "HEAD", "nosuch"], 1);
    assert_one_line_error(&stderr, &["nosuch"]);
    let stderr = shop.fails(&["diff", "HEAD", "per_plan", "--all"], 1);
    assert_one_line_error(&stderr, &["`per_plan` is a relation", "--all"]);
}

#[test]
fn a_name_that_is_both_a_reference_and_a_relation_is_an_error() {
    let shop = shop();
    shop.ok(&["branch", "customers"]);
    let stderr = shop.fails(&["diff", "HEAD", "customers"], 1);
    assert_one_line_error(
        &stderr,
        &[
            "`customers` is both a reference and a relation",
            "rnt diff HEAD^ HEAD customers",
        ],
    );
    // The three-word form says which is which.
    assert_eq!(
        shop.ok(&["diff", "HEAD^", "HEAD", "customers"]),
        "-customers(1, \"b\")\n+customers(1, \"a\")\n+customers(3, \"c\")\n"
    );
    assert_eq!(shop.ok(&["diff", "HEAD", "customers", "--all"]), "");
}

#[test]
fn json_lists_the_same_changes_in_the_same_order() {
    let shop = shop();
    let json: serde_json::Value =
        serde_json::from_str(&shop.ok(&["diff", "HEAD", "customers", "--format", "json"])).unwrap();
    assert_eq!(
        json,
        json!([
            {"relation": "customers", "sign": "-", "tuple": [1, "b"]},
            {"relation": "customers", "sign": "+", "tuple": [1, "a"]},
            {"relation": "customers", "sign": "+", "tuple": [3, "c"]},
        ])
    );
    let stderr = shop.fails(&["diff", "HEAD", "--program", "--format", "json"], 1);
    assert_one_line_error(&stderr, &["--program"]);
}
