//! End to end: `log --graph`, `--all` and `--views` (issue 26, item 2) — the graph follows
//! every parent and keeps a line of history together; `--all` starts from every branch and
//! tag; `--views` adds view change counts (a column, or a `views` key in JSON) while the
//! JSON keeps its shape otherwise; bad combinations are usage errors. The drawing itself is
//! pinned by `transcripts/history.t`.

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::Value;

const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
view per_plan(plan: str, n: int).
per_plan(p, count()) :- customers(_, p).
";

/// main: define, base, m1, merge side, m2; side: s1 (from base); other: o1 (from base).
fn history() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit("base", &["+customers(1, \"a\")"]);
    shop.ok(&["branch", "side"]);
    shop.ok(&["branch", "other"]);
    shop.commit("m1", &["+customers(2, \"a\")"]);
    shop.ok(&["switch", "side"]);
    shop.commit("s1", &["+customers(3, \"b\")"]);
    shop.ok(&["switch", "other"]);
    shop.commit("o1", &["+customers(4, \"c\")"]);
    shop.ok(&["switch", "main"]);
    shop.ok(&["merge", "side"]);
    shop.commit("m2", &["+customers(1, \"z\")"]);
    shop
}

fn messages(log: &[Value]) -> Vec<&str> {
    log.iter().map(|c| c["message"].as_str().unwrap()).collect()
}

fn json(shop: &Shop, args: &[&str]) -> Vec<Value> {
    serde_json::from_str(&shop.ok(args)).expect("log prints JSON")
}

#[test]
fn graph_follows_every_parent_and_all_every_branch() {
    let shop = history();
    let first_parent = json(&shop, &["log", "--format", "json"]);
    assert_eq!(
        messages(&first_parent),
        ["m2", "Merge side", "m1", "base", "define p.rnt"]
    );
    let graph = json(&shop, &["log", "--graph", "--format", "json"]);
    assert_eq!(
        messages(&graph),
        ["m2", "Merge side", "s1", "m1", "base", "define p.rnt"]
    );
    // The same keys in every mode.
    let keys = |c: &Value| c.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&graph[0]), keys(&first_parent[0]));
    let all = json(&shop, &["log", "--all", "--format", "json"]);
    assert_eq!(all.len(), 7);
    assert!(messages(&all).contains(&"o1"));
    // Children before parents.
    let position = |m: &str| messages(&all).iter().position(|x| *x == m).unwrap();
    assert!(position("o1") < position("base"));
    assert!(position("Merge side") < position("s1"));
    // -n cuts the list; a REF starts it.
    assert_eq!(
        json(&shop, &["log", "--graph", "-n", "2", "--format", "json"]).len(),
        2
    );
    assert_eq!(
        messages(&json(
            &shop,
            &["log", "side", "--graph", "--format", "json"]
        )),
        ["s1", "base", "define p.rnt"]
    );
    let table = shop.ok(&["log", "--graph"]);
    assert!(table.starts_with("* "), "{table}");
    assert!(
        table.contains("(HEAD -> main) m2  [customers +1 -1]"),
        "{table}"
    );
    assert!(table.contains("|\\\n"), "{table}");
    assert!(table.contains("|/\n"), "{table}");
    let table = shop.ok(&["log", "--all"]);
    assert!(table.starts_with("commit  "), "{table}");
    assert_eq!(table.lines().count(), 8, "{table}");
}

#[test]
fn views_adds_the_view_change_counts() {
    let shop = history();
    let log = json(&shop, &["log", "--views", "--format", "json"]);
    assert_eq!(
        log[0]["views"],
        serde_json::json!({"per_plan": {"inserted": 2, "deleted": 1}})
    );
    assert_eq!(log[0]["changes"]["customers"]["deleted"], 1);
    assert_eq!(log[4]["views"], serde_json::json!({}));
    assert!(json(&shop, &["log", "--format", "json"])[0]
        .get("views")
        .is_none());
    let table = shop.ok(&["log", "--views"]);
    let header = table.lines().next().unwrap();
    assert!(header.ends_with("changes          views"), "{table}");
    assert!(
        table.lines().nth(1).unwrap().ends_with("per_plan +2 -1"),
        "{table}"
    );
    let graph = shop.ok(&["log", "--graph", "--views"]);
    assert!(graph.contains("[views: per_plan +2 -1]"), "{graph}");
}

#[test]
fn bad_combinations_are_usage_errors() {
    let shop = history();
    for args in [
        &["log", "--graph", "--relation", "customers"][..],
        &["log", "--all", "HEAD"],
        &["log", "--all", "--relation", "customers"],
    ] {
        let stderr = shop.fails(args, 1);
        assert_one_line_error(&stderr, &["cannot be used with"]);
    }
    let stderr = shop.fails(&["log", "--graph", "nosuch"], 1);
    assert_one_line_error(&stderr, &["nosuch"]);
    let empty = Shop::init();
    assert_eq!(empty.ok(&["log", "--graph"]), "no commits yet\n");
    assert_eq!(empty.ok(&["log", "--all"]), "no commits yet\n");
    assert_eq!(empty.ok(&["log", "--all", "--format", "json"]), "[]\n");
}
