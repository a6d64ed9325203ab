//! End to end: resolving merge conflicts (issue 26, item 1) — `rnt merge NAME` on a keyed
//! conflict exits 4 and writes nothing, saying how to resolve; `--ours`, `--theirs` and
//! `--resolve FILE` merge, maintain and judge as any merge; `--conflicts` lists the keys
//! as a table, a change file or JSON and writes nothing; each bad resolution is an error
//! with its exit code, and the head unchanged.

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::Value;

/// Keyed customers, a per-plan count and a denial on a plan name.
const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
view per_plan(plan: str, n: int).
per_plan(p, count()) :- customers(_, p).
denial banned(id: int).
banned(i) :- customers(i, \"banned\").
";

/// A history with two conflicting keys (1 and 2) and a clean change on each side: main
/// gave 1 and 2 plan "o" and added 5; `side` gave them "t" and added 4.
fn forked() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit(
        "base",
        &[
            "+customers(1, \"a\")",
            "+customers(2, \"b\")",
            "+customers(3, \"c\")",
        ],
    );
    shop.ok(&["branch", "side"]);
    shop.commit(
        "ours",
        &[
            "+customers(1, \"o\")",
            "+customers(2, \"o\")",
            "+customers(5, \"o\")",
        ],
    );
    shop.ok(&["switch", "side"]);
    shop.commit(
        "theirs",
        &[
            "+customers(1, \"t\")",
            "+customers(2, \"t\")",
            "+customers(4, \"t\")",
        ],
    );
    shop.ok(&["switch", "main"]);
    shop
}

fn plans(shop: &Shop) -> Vec<(i64, String)> {
    shop.rows("customers", None)
        .into_iter()
        .map(|r| (r[0].as_i64().unwrap(), r[1].as_str().unwrap().to_string()))
        .collect()
}

fn pairs(items: &[(i64, &str)]) -> Vec<(i64, String)> {
    items.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

#[test]
fn a_conflict_exits_4_writes_nothing_and_says_how_to_resolve() {
    let shop = forked();
    let head = shop.head();
    let stderr = shop.fails(&["merge", "side"], 4);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].starts_with("error: cannot merge `side`: 2 key(s)"),
        "{stderr}"
    );
    assert_eq!(
        lines[1],
        "conflict in customers at key id=1: ours customers(1, \"o\"), theirs customers(1, \"t\")"
    );
    assert!(
        lines[2].starts_with("conflict in customers at key id=2:"),
        "{stderr}"
    );
    for needle in [
        "--ours",
        "--theirs",
        "--conflicts --format changes",
        "--resolve",
    ] {
        assert!(lines[3].contains(needle), "{needle} missing: {stderr}");
    }
    assert_eq!(shop.head(), head);
}

#[test]
fn ours_and_theirs_keep_one_side_at_every_conflicting_key() {
    let shop = forked();
    shop.ok(&["branch", "before"]);
    let out = shop.ok(&["merge", "side", "--ours"]);
    assert!(out.starts_with("committed "), "{out}");
    assert_eq!(
        plans(&shop),
        pairs(&[(1, "o"), (2, "o"), (3, "c"), (4, "t"), (5, "o")])
    );
    assert_eq!(shop.rows("per_plan", None).len(), 3); // c, o, t
    shop.ok(&["verify"]);
    assert_eq!(shop.log()[0]["parents"].as_array().unwrap().len(), 2);
    shop.ok(&["reset", "before"]);
    shop.ok(&["merge", "side", "--theirs", "-m", "took theirs"]);
    assert_eq!(
        plans(&shop),
        pairs(&[(1, "t"), (2, "t"), (3, "c"), (4, "t"), (5, "o")])
    );
    assert_eq!(shop.log()[0]["message"], "took theirs");
    shop.ok(&["verify"]);
}

#[test]
fn a_resolution_that_a_denial_refuses_exits_2_and_writes_nothing() {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit("base", &["+customers(1, \"a\")"]);
    shop.ok(&["branch", "side"]);
    shop.commit("ours", &["+customers(1, \"o\")"]);
    shop.ok(&["switch", "side"]);
    shop.commit("theirs", &["+customers(1, \"t\")"]);
    shop.ok(&["switch", "main"]);
    shop.write("picks.changes", "+customers(1, \"banned\")\n");
    let head = shop.head();
    let stderr = shop.fails(&["merge", "side", "--resolve", "picks.changes"], 2);
    assert_one_line_error(&stderr, &["denial banned violated by banned(1)"]);
    assert_eq!(shop.head(), head);
}

#[test]
fn conflicts_print_as_a_table_a_change_file_and_json_and_write_nothing() {
    let shop = forked();
    let head = shop.head();
    assert_eq!(
        shop.ok(&["merge", "side", "--conflicts"]),
        "\
relation   key   ours               theirs
customers  id=1  customers(1, \"o\")  customers(1, \"t\")
customers  id=2  customers(2, \"o\")  customers(2, \"t\")
(2 conflicts)
"
    );
    let changes = shop.ok(&["merge", "side", "--conflicts", "--format", "changes"]);
    assert!(changes.starts_with("# One line per key"), "{changes}");
    assert!(
        changes.contains(
            "\n# customers id=1\n+customers(1, \"o\")  # ours\n#+customers(1, \"t\")  # theirs\n"
        ),
        "{changes}"
    );
    let json: Value =
        serde_json::from_str(&shop.ok(&["merge", "side", "--conflicts", "--format", "json"]))
            .unwrap();
    assert_eq!(
        json,
        serde_json::json!([
            {"relation": "customers", "key": {"id": 1}, "ours": [1, "o"], "theirs": [1, "t"]},
            {"relation": "customers", "key": {"id": 2}, "ours": [2, "o"], "theirs": [2, "t"]},
        ])
    );
    assert_eq!(shop.head(), head);
    // The change file as printed resolves every key as ours.
    shop.write("picks.changes", &changes);
    shop.ok(&["merge", "side", "--resolve", "picks.changes"]);
    assert_eq!(
        plans(&shop),
        pairs(&[(1, "o"), (2, "o"), (3, "c"), (4, "t"), (5, "o")])
    );
    // No conflicts left: an empty list in each format.
    assert_eq!(
        shop.ok(&["merge", "side", "--conflicts"]),
        "relation  key  ours  theirs\n(0 conflicts)\n"
    );
    assert_eq!(
        shop.ok(&["merge", "side", "--conflicts", "--format", "changes"]),
        ""
    );
    assert_eq!(
        shop.ok(&["merge", "side", "--conflicts", "--format", "json"]),
        "[]\n"
    );
}

#[test]
fn a_change_file_picks_per_key() {
    let shop = forked();
    shop.write(
        "picks.changes",
        "# theirs for 1, a new tuple for 2\n+customers(1, \"t\")\n+customers(id: 2, plan: \"new\")\n",
    );
    shop.ok(&["merge", "side", "--resolve", "picks.changes"]);
    assert_eq!(
        plans(&shop),
        pairs(&[(1, "t"), (2, "new"), (3, "c"), (4, "t"), (5, "o")])
    );
    shop.ok(&["verify"]);
    // A key deleted by the pick.
    shop.ok(&["reset", "HEAD~1"]);
    shop.write("picks.changes", "+customers(1, \"o\")\n-customers(2, _)\n");
    shop.ok(&["merge", "side", "--resolve", "picks.changes"]);
    assert_eq!(
        plans(&shop),
        pairs(&[(1, "o"), (3, "c"), (4, "t"), (5, "o")])
    );
    shop.ok(&["verify"]);
}

#[test]
fn bad_resolutions_are_refused_with_the_head_unchanged() {
    let shop = forked();
    let head = shop.head();
    let cases: [(&str, i32, &[&str]); 8] = [
        (
            "+customers(1, \"o\")\n",
            1,
            &["leave customers key id=2 unresolved"],
        ),
        (
            "+customers(1, \"o\")\n+customers(2, \"o\")\n+customers(3, \"x\")\n",
            1,
            &["picks.changes, line 3", "key id=3 is not in conflict"],
        ),
        (
            "+customers(1, \"o\")\n-customers(1, _)\n+customers(2, \"o\")\n",
            1,
            &["line 2", "picked twice"],
        ),
        (
            "~customers(id: 1, plan: \"o\")\n+customers(2, \"o\")\n",
            1,
            &["line 1", "not an update"],
        ),
        ("+customers(1, \"o\"\n", 1, &["picks.changes", "line 1"]),
        ("+nosuch(1)\n", 1, &["unknown relation `nosuch`"]),
        ("+customers(1, 2)\n", 1, &["line 1"]),
        ("+per_plan(\"o\", 1)\n", 1, &["no key"]),
    ];
    for (text, code, needles) in cases {
        shop.write("picks.changes", text);
        let stderr = shop.fails(&["merge", "side", "--resolve", "picks.changes"], code);
        assert_one_line_error(&stderr, needles);
        assert_eq!(shop.head(), head, "{text}");
    }
    let stderr = shop.fails(&["merge", "side", "--resolve", "missing.changes"], 1);
    assert_one_line_error(&stderr, &["cannot read missing.changes"]);
    for args in [
        &["merge", "side", "--ours", "--theirs"][..],
        &["merge", "side", "--ours", "--resolve", "picks.changes"],
        &["merge", "side", "--conflicts", "--ours"],
        &["merge", "side", "--format", "json"],
        &["merge", "side", "--conflicts", "--format", "csv"],
    ] {
        let stderr = shop.fails(args, 1);
        assert_one_line_error(&stderr, &[]);
        assert_eq!(shop.head(), head, "{args:?}");
    }
    let stderr = shop.fails(&["merge", "nosuch", "--conflicts"], 1);
    assert_one_line_error(&stderr, &["nosuch"]);
}

#[test]
fn their_program_and_our_tuples_merge_with_ours() {
    // The merge starts from their side when only they changed the program.
    let shop = forked();
    shop.ok(&["switch", "side"]);
    shop.write(
        "q.rnt",
        &format!("{PROGRAM}view names(id: int).\nnames(i) :- customers(i, _).\n"),
    );
    shop.ok(&["define", "q.rnt"]);
    shop.ok(&["switch", "main"]);
    shop.fails(&["merge", "side"], 4);
    let out = shop.ok(&["merge", "side", "--ours"]);
    assert!(out.starts_with("took the program of side\n"), "{out}");
    assert_eq!(
        plans(&shop),
        pairs(&[(1, "o"), (2, "o"), (3, "c"), (4, "t"), (5, "o")])
    );
    assert_eq!(shop.rows("names", None).len(), 5);
    shop.ok(&["verify"]);
}

#[test]
fn a_fast_forward_or_an_up_to_date_merge_takes_the_flags_too() {
    let shop = forked();
    shop.ok(&["branch", "ahead"]);
    shop.ok(&["switch", "ahead"]);
    shop.commit("more", &["+customers(9, \"z\")"]);
    shop.ok(&["switch", "main"]);
    assert_eq!(
        shop.ok(&["merge", "ahead", "--conflicts"]),
        "relation  key  ours  theirs\n(0 conflicts)\n"
    );
    assert!(shop
        .ok(&["merge", "ahead", "--theirs"])
        .starts_with("fast-forward"));
    assert_eq!(
        shop.ok(&["merge", "ahead", "--ours"]),
        "already up to date\n"
    );
}
