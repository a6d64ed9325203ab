//! Merging across `rnt alter`: one side alters a relation, the other changes its tuples,
//! and the merge carries those changes into the new schema (a fill for an added column,
//! by position across renames, projected for a dropped column, widened for a type); both
//! sides altering it differently is refused (exit 1, naming both, HEAD unchanged).

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::json;

const PROGRAM: &str = "\
relation orders(id: int, customer: int, amount: int) key(id).
relation notes(n: int, text: str).
view total(c: int, t: int).
total(c, sum(a)) :- orders(_, c, a).
view counted(n: int, k: int).
counted(n, count()) :- notes(n, _).
";

/// A store with PROGRAM, a first commit, and a branch `side` at it.
fn forked() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit(
        "data",
        &[
            "+orders(1, 7, 30)",
            "+orders(2, 7, 12)",
            "+notes(1, \"a\")",
            "+notes(1, \"b\")",
        ],
    );
    shop.ok(&["branch", "side"]);
    shop
}

/// Changes only tuples, on the current branch.
fn change_tuples(shop: &Shop) {
    shop.commit(
        "tuples",
        &[
            "+orders(3, 8, 5)",
            "-orders(1, 7, 30)",
            "+notes(2, \"c\")",
            "-notes(1, \"a\")",
        ],
    );
}

#[test]
fn their_tuple_changes_are_carried_into_our_altered_schema() {
    let shop = forked();
    shop.ok(&["switch", "side"]);
    change_tuples(&shop);
    shop.ok(&["switch", "main"]);
    shop.ok(&[
        "alter",
        "orders",
        "add",
        "note",
        "str?",
        "--default",
        "\"n\"",
    ]);
    shop.ok(&["alter", "orders", "rename", "customer", "buyer"]);
    shop.ok(&["alter", "orders", "type", "amount", "decimal(9, 1)"]);
    shop.ok(&["alter", "notes", "drop", "text"]);
    shop.ok(&["merge", "side"]);
    assert_eq!(
        shop.rows("orders", None),
        vec![
            vec![json!(2), json!(7), json!("12.0"), json!("n")],
            vec![json!(3), json!(8), json!("5.0"), json!("n")],
        ]
    );
    // notes(1, "b") is still there on both sides: notes(1) stays.
    assert_eq!(
        shop.rows("notes", None),
        vec![vec![json!(1)], vec![json!(2)]]
    );
    shop.ok(&["verify"]);
    assert_merged_equals_a_fresh_build(&shop);
}

#[test]
fn our_tuple_changes_are_carried_into_their_altered_schema_across_a_rename_to() {
    let shop = forked();
    shop.ok(&["switch", "side"]);
    shop.ok(&["alter", "orders", "rename-to", "sales"]);
    shop.ok(&["alter", "sales", "add", "q", "int", "--default", "4"]);
    shop.ok(&["switch", "main"]);
    change_tuples(&shop);
    let out = shop.ok(&["merge", "side"]);
    assert!(out.contains("took the program of side"), "{out}");
    assert_eq!(
        shop.rows("sales", None),
        vec![
            vec![json!(2), json!(7), json!(12), json!(4)],
            vec![json!(3), json!(8), json!(5), json!(4)],
        ]
    );
    shop.ok(&["verify"]);
    assert_merged_equals_a_fresh_build(&shop);
}

#[test]
fn both_sides_altering_one_relation_differently_is_refused_naming_both() {
    let shop = forked();
    shop.ok(&["switch", "side"]);
    shop.ok(&["alter", "orders", "add", "q", "int?"]);
    shop.ok(&["switch", "main"]);
    shop.ok(&["alter", "orders", "add", "r", "int?"]);
    let head = shop.head();
    let stderr = shop.fails(&["merge", "side"], 1);
    assert_one_line_error(
        &stderr,
        &["both branches altered", "r: int?", "q: int?", "side"],
    );
    assert_eq!(shop.head(), head);
}

#[test]
fn a_default_given_to_an_empty_relation_cannot_be_carried_and_the_merge_is_refused() {
    let shop = forked();
    shop.commit("empty notes", &["-notes(1, \"a\")", "-notes(1, \"b\")"]);
    shop.ok(&["branch", "other"]);
    shop.ok(&["alter", "notes", "add", "k", "int", "--default", "3"]);
    shop.ok(&["switch", "other"]);
    shop.commit("a note", &["+notes(5, \"e\")"]);
    shop.ok(&["switch", "main"]);
    let head = shop.head();
    let stderr = shop.fails(&["merge", "other"], 1);
    assert_one_line_error(
        &stderr,
        &[
            "`notes.k`",
            "--default",
            "kept nowhere",
            "add `k` on the other branch",
        ],
    );
    assert_eq!(shop.head(), head, "a refused merge moved HEAD");
}

/// The merged head's state equals, by address, the state of its program and base
/// contents built from scratch in a new store (define, then one commit of every tuple).
fn assert_merged_equals_a_fresh_build(shop: &Shop) {
    let fresh = Shop::init();
    fresh.write("p.rnt", &shop.ok(&["program"]));
    fresh.ok(&["define", "p.rnt"]);
    let changes = shop.ok(&["diff", "HEAD", "HEAD"]);
    assert!(changes.is_empty());
    let mut all = String::new();
    for relation in ["orders", "sales", "notes"] {
        let run = shop.run(&["show", relation, "--format", "changes"]);
        if run.code == 0 {
            all.push_str(&run.stdout);
        }
    }
    fresh.write("all.changes", &all);
    fresh.ok(&["commit", "-m", "all", "-f", "all.changes"]);
    assert_eq!(fresh.state(), shop.state(), "merged state != fresh build");
}
