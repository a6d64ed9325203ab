//! End to end: branches, `switch`, tags, `reflog`, `reset`, `revert`, `merge` and what `gc`
//! keeps — each output format, each error with its exit code, and the head (and every
//! ref) unchanged after a failure.

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::Value;

/// The shop with a view and a denial, and one commit of data on `main`.
const PROGRAM: &str = "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view plan_total(plan: str, total: int).
plan_total(p, sum(a)) :- orders(_, c, a), customers(c, p).
denial orphan(id: int).
orphan(o) :- orders(o, c, _), not customers(c, _).
";

fn shop() -> Shop {
    let shop = Shop::init();
    shop.write("shop.rnt", PROGRAM);
    shop.ok(&["define", "shop.rnt"]);
    shop.commit("first", &["+customers(1, \"basic\")", "+orders(1, 1, 10)"]);
    shop
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Every ref the store has, as `rnt branch`/`tag`/`status` report them: what a failed
/// command must leave as it was.
fn refs(shop: &Shop) -> (String, String, String) {
    (
        shop.ok(&["branch", "--format", "json"]),
        shop.ok(&["tag", "--format", "json"]),
        shop.ok(&["reflog", "--format", "json"]),
    )
}

#[test]
fn status_names_the_branch_and_keeps_its_other_keys() {
    let shop = Shop::init();
    let status = shop.status();
    assert_eq!(status["branch"], "main");
    assert!(status["commit"].is_null());
    let shop = self::shop();
    let status = shop.status();
    assert_eq!(status["branch"], "main");
    for key in ["commit", "state", "relations"] {
        assert!(status.get(key).is_some(), "{status}");
    }
    assert!(shop.ok(&["status"]).starts_with("branch  main\n"));
    shop.ok(&["branch", "feature"]);
    shop.ok(&["switch", "feature"]);
    assert_eq!(shop.status()["branch"], "feature");
}

#[test]
fn branch_lists_creates_and_deletes() {
    let shop = shop();
    let head = shop.head().unwrap();
    let out = shop.ok(&["branch", "feature"]);
    assert_eq!(out, format!("created branch feature at {}\n", &head[..12]));
    shop.ok(&["branch", "old", "HEAD~1"]);
    let list = json(&shop.ok(&["branch", "--format", "json"]));
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["feature", "main", "old"]);
    assert_eq!(list[1]["current"], true);
    assert_eq!(list[0]["current"], false);
    assert_eq!(list[0]["commit"], head.as_str());
    assert_ne!(list[2]["commit"], head.as_str());
    let table = shop.ok(&["branch"]);
    assert!(table.contains("* main"), "{table}");
    assert!(table.contains("  feature"), "{table}");
    // Delete, in both formats.
    let out = shop.ok(&["branch", "-d", "old"]);
    assert!(out.starts_with("deleted branch old (was "), "{out}");
    let deleted = json(&shop.ok(&["branch", "-d", "feature", "--format", "json"]));
    assert_eq!(deleted["name"], "feature");
    assert_eq!(deleted["commit"], head.as_str());
    let list = json(&shop.ok(&["branch", "--format", "json"]));
    assert_eq!(list.as_array().unwrap().len(), 1);
}

#[test]
fn branch_errors_exit_1_and_change_nothing() {
    let shop = shop();
    shop.ok(&["branch", "feature"]);
    let before = refs(&shop);
    let cases: &[(&[&str], &[&str])] = &[
        (&["branch", "feature"], &["branch `feature` already exists"]),
        (&["branch", "HEAD"], &["invalid branch name `HEAD`"]),
        (&["branch", "a b"], &["invalid branch name", "not allowed"]),
        (&["branch", "x..y"], &["invalid branch name", ".."]),
        (
            &["branch", "x", "nowhere"],
            &["unknown reference `nowhere`"],
        ),
        (&["branch", "x", "HEAD~9"], &["past the root commit"]),
        (
            &["branch", "-d", "main"],
            &["cannot delete branch `main`", "current branch"],
        ),
        (&["branch", "-d", "nope"], &["no branch named `nope`"]),
        (&["switch", "nope"], &["no branch named `nope`"]),
        (&["tag", "v1", "nowhere"], &["unknown reference `nowhere`"]),
        (&["tag", "-d", "nope"], &["no tag named `nope`"]),
        (&["reset", "nowhere"], &["unknown reference `nowhere`"]),
        (&["revert", "nowhere"], &["unknown reference `nowhere`"]),
        (&["merge", "nowhere"], &["unknown reference `nowhere`"]),
    ];
    for (args, needles) in cases {
        let stderr = shop.fails(args, 1);
        assert_one_line_error(&stderr, needles);
        assert_eq!(refs(&shop), before, "{args:?} changed a ref");
    }
    // A state named by its hash is not a commit.
    let state = shop.state();
    for command in ["reset", "revert", "merge", "branch"] {
        let args: Vec<&str> = if command == "branch" {
            vec!["branch", "x", &state]
        } else {
            vec![command, &state]
        };
        let stderr = shop.fails(&args, 1);
        assert_one_line_error(&stderr, &["names a state by its hash, not a commit"]);
        assert_eq!(refs(&shop), before);
    }
}

#[test]
fn switch_moves_head_and_commits_go_to_the_current_branch() {
    let shop = shop();
    let first = shop.head().unwrap();
    shop.ok(&["branch", "feature"]);
    assert!(shop
        .ok(&["switch", "feature"])
        .starts_with("switched to branch feature"));
    assert!(shop
        .ok(&["switch", "feature"])
        .starts_with("already on branch feature"));
    shop.commit("on feature", &["+orders(2, 1, 5)"]);
    let feature = shop.head().unwrap();
    assert_ne!(feature, first);
    // main did not move; HEAD follows the current branch; every branch is a REF.
    shop.ok(&["switch", "main"]);
    assert_eq!(shop.head().unwrap(), first);
    assert_eq!(shop.rows("orders", Some("feature")).len(), 2);
    assert_eq!(shop.rows("orders", None).len(), 1);
    assert_eq!(shop.ok(&["diff", "main", "feature"]), "+orders(2, 1, 5)\n");
    let log = json(&shop.ok(&["log", "feature", "--format", "json"]));
    assert_eq!(log[0]["commit"], feature.as_str());
    assert_eq!(log[1]["commit"], first.as_str());
    shop.ok(&["verify", "--at", "feature"]);
}

#[test]
fn tags_name_commits_and_never_move() {
    let shop = shop();
    let first = shop.head().unwrap();
    assert_eq!(
        shop.ok(&["tag", "v1"]),
        format!("created tag v1 (at {})\n", &first[..12])
    );
    shop.commit("second", &["+orders(2, 1, 5)"]);
    let created = json(&shop.ok(&["tag", "v2", "--format", "json"]));
    assert_eq!(created["name"], "v2");
    // Tags are REFs, with steps back after them.
    assert_eq!(shop.rows("orders", Some("v1")).len(), 1);
    assert_eq!(shop.ok(&["diff", "v1", "v2"]), "+orders(2, 1, 5)\n");
    assert_eq!(shop.ok(&["diff", "v2~1", "v1"]), "");
    let stderr = shop.fails(&["tag", "v1"], 1);
    assert_one_line_error(&stderr, &["tag `v1` already exists", "never move"]);
    let list = json(&shop.ok(&["tag", "--format", "json"]));
    assert_eq!(list[0]["name"], "v1");
    assert_eq!(list[0]["commit"], first.as_str());
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(shop
        .ok(&["tag"])
        .starts_with(&format!("v1  {}\n", &first[..12])));
    // A tag is not a branch to switch to.
    let stderr = shop.fails(&["switch", "v1"], 1);
    assert_one_line_error(&stderr, &["no branch named `v1`", "it is a tag"]);
    shop.ok(&["tag", "-d", "v1"]);
    let stderr = shop.fails(&["show", "orders", "--at", "v1"], 1);
    assert_one_line_error(&stderr, &["unknown reference `v1`"]);
}

#[test]
fn reflog_lists_every_value_of_the_current_branch() {
    let shop = shop();
    shop.commit("second", &["+orders(2, 1, 5)"]);
    let second = shop.head().unwrap();
    shop.ok(&["reset", "HEAD~1"]);
    let log = json(&shop.ok(&["reflog", "--format", "json"]));
    let actions: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "reset: moving to HEAD~1",
            "commit: second",
            "commit: first",
            "commit: define shop.rnt"
        ]
    );
    assert_eq!(log[1]["commit"], second.as_str());
    assert!(log[0]["time"].as_str().unwrap().ends_with('Z'));
    let two = json(&shop.ok(&["reflog", "-n", "2", "--format", "json"]));
    assert_eq!(two.as_array().unwrap().len(), 2);
    let table = shop.ok(&["reflog", "-n", "1"]);
    assert!(table.starts_with("entry"), "{table}");
    assert!(table.contains("main@{0}"), "{table}");
    assert!(table.contains("reset: moving to HEAD~1"), "{table}");
    assert_eq!(shop.ok(&["reflog", "-n", "0"]), "");
    let fresh = Shop::init();
    assert_eq!(fresh.ok(&["reflog"]), "branch main has no commits yet\n");
    // Before the first commit: the current branch is listed, and switching to it is fine.
    assert_eq!(fresh.ok(&["branch"]), "* main (no commits yet)\n");
    assert_eq!(
        fresh.ok(&["switch", "main"]),
        "already on branch main (no commits yet)\n"
    );
    let stderr = fresh.fails(&["branch", "x"], 1);
    assert_one_line_error(&stderr, &["HEAD: the store has no commits yet"]);
}

#[test]
fn reset_moves_the_branch_and_deletes_nothing() {
    let shop = shop();
    let first_state = shop.state();
    shop.commit("second", &["+orders(2, 1, 5)"]);
    let second = shop.head().unwrap();
    let second_state = shop.state();
    let out = shop.ok(&["reset", "HEAD~1"]);
    assert!(out.starts_with("main is now at "), "{out}");
    assert!(
        out.contains(&format!("rnt reset {}", &second[..12])),
        "{out}"
    );
    assert_eq!(shop.state(), first_state);
    assert!(shop
        .ok(&["reset", "HEAD"])
        .starts_with("main is already at"));
    // The old head survives gc (the reflog reaches it) and a reset brings it back.
    shop.ok(&["gc"]);
    shop.ok(&["reset", &second[..12]]);
    assert_eq!(shop.state(), second_state);
    shop.ok(&["verify"]);
    let stderr = Shop::init().fails(&["reset", "HEAD"], 1);
    assert_one_line_error(&stderr, &["no commits yet"]);
}

#[test]
fn revert_commits_the_inverse_and_a_second_revert_restores() {
    let shop = shop();
    shop.commit(
        "second",
        &[
            "+customers(2, \"pro\")",
            "+orders(2, 2, 5)",
            "-orders(1, 1, 10)",
        ],
    );
    let second_state = shop.state();
    let before = shop.ok(&["diff", "HEAD~1", "HEAD"]);
    let out = shop.ok(&["revert", "HEAD"]);
    assert!(out.starts_with("committed "), "{out}");
    assert_eq!(shop.log()[0]["message"], "Revert \"second\"");
    assert_eq!(shop.ok(&["diff", "HEAD~2", "HEAD"]), "");
    // Its diff is the inverse of the reverted commit's.
    let inverse = shop.ok(&["diff", "HEAD"]);
    let flipped: Vec<String> = before
        .lines()
        .map(|l| match l.strip_prefix('+') {
            Some(rest) => format!("-{rest}"),
            None => format!("+{}", &l[1..]),
        })
        .collect();
    let mut flipped = flipped;
    flipped.sort();
    let mut got: Vec<String> = inverse.lines().map(str::to_string).collect();
    got.sort();
    assert_eq!(got, flipped);
    shop.ok(&["verify"]);
    shop.ok(&["revert", "HEAD", "-m", "again"]);
    assert_eq!(shop.state(), second_state);
    assert_eq!(shop.log()[0]["message"], "again");
    // Reverting the first revert again: the head already holds what it removed.
    let head = shop.head();
    assert_eq!(shop.ok(&["revert", "HEAD~1"]), "nothing to commit\n");
    assert_eq!(shop.head(), head);
}

#[test]
fn a_revert_a_denial_refuses_exits_2_and_changes_nothing() {
    let shop = shop();
    // Reverting the customer's insertion (but not the order) would orphan order 1.
    shop.commit("order 2", &["+orders(2, 1, 20)"]);
    let before = refs(&shop);
    let stderr = shop.fails(&["revert", "HEAD~1"], 2);
    assert_one_line_error(&stderr, &["denial orphan violated by orphan("]);
    assert_eq!(refs(&shop), before);
}

#[test]
fn a_revert_of_a_define_notes_that_the_program_stays() {
    let shop = shop();
    let run = shop.run(&["revert", "HEAD~1"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("note:"), "{run:?}");
    assert!(
        run.stderr.contains("revert undoes base changes only"),
        "{run:?}"
    );
    assert_eq!(run.stdout, "nothing to commit\n");
}

#[test]
fn merge_fast_forwards_and_up_to_date_write_no_state() {
    let shop = shop();
    shop.ok(&["branch", "feature"]);
    shop.ok(&["switch", "feature"]);
    shop.commit("f", &["+orders(2, 1, 5)"]);
    let feature = shop.head().unwrap();
    shop.ok(&["switch", "main"]);
    let out = shop.ok(&["merge", "feature"]);
    assert!(out.starts_with("fast-forward "), "{out}");
    assert_eq!(shop.head().unwrap(), feature);
    assert_eq!(shop.ok(&["merge", "feature"]), "already up to date\n");
    assert_eq!(shop.head().unwrap(), feature);
    let log = json(&shop.ok(&["reflog", "-n", "1", "--format", "json"]));
    assert_eq!(log[0]["action"], "merge feature: fast-forward");
}

#[test]
fn a_three_way_merge_maintains_views_and_has_two_parents() {
    let shop = shop();
    shop.ok(&["branch", "feature"]);
    shop.ok(&["switch", "feature"]);
    shop.commit("f", &["+orders(2, 1, 5)", "-orders(1, 1, 10)"]);
    let feature = shop.head().unwrap();
    shop.ok(&["switch", "main"]);
    shop.commit("m", &["+customers(2, \"pro\")", "+orders(3, 2, 7)"]);
    let main = shop.head().unwrap();
    let out = shop.ok(&["merge", "feature", "-m", "bring feature in"]);
    assert!(out.starts_with("committed "), "{out}");
    let log = shop.log();
    assert_eq!(log[0]["message"], "bring feature in");
    assert_eq!(log[0]["parents"], serde_json::json!([main, feature]));
    assert_eq!(
        shop.rows("orders", None),
        [
            vec![Value::from(2), Value::from(1), Value::from(5)],
            vec![Value::from(3), Value::from(2), Value::from(7)]
        ]
    );
    assert_eq!(
        shop.rows("plan_total", None),
        [
            vec![Value::from("basic"), Value::from(5)],
            vec![Value::from("pro"), Value::from(7)]
        ]
    );
    shop.ok(&["verify"]);
    // The same contents built from scratch have the same state hash.
    let fresh = Shop::init();
    fresh.write("shop.rnt", PROGRAM);
    fresh.ok(&["define", "shop.rnt"]);
    fresh.commit(
        "all",
        &[
            "+customers(1, \"basic\")",
            "+customers(2, \"pro\")",
            "+orders(2, 1, 5)",
            "+orders(3, 2, 7)",
        ],
    );
    assert_eq!(fresh.state(), shop.state());
    // `diff HEAD` is from the first parent (ours).
    assert_eq!(
        shop.ok(&["diff", "HEAD"]),
        "-orders(1, 1, 10)\n+orders(2, 1, 5)\n"
    );
}

#[test]
fn a_merge_a_denial_refuses_exits_2_and_writes_nothing() {
    let shop = shop();
    shop.commit("c2", &["+customers(2, \"pro\")"]);
    shop.ok(&["branch", "feature"]);
    shop.ok(&["switch", "feature"]);
    shop.commit("drop customer 2", &["-customers(2, \"pro\")"]);
    shop.ok(&["switch", "main"]);
    shop.commit("order for 2", &["+orders(2, 2, 5)"]);
    let before = refs(&shop);
    // Each side is fine; together order 2 has no customer.
    let stderr = shop.fails(&["merge", "feature"], 2);
    assert_one_line_error(&stderr, &["denial orphan violated by orphan(2)"]);
    assert_eq!(refs(&shop), before);
}

#[test]
fn a_merge_takes_the_only_changed_program_and_refuses_two() {
    let shop = shop();
    shop.ok(&["branch", "feature"]);
    shop.ok(&["switch", "feature"]);
    shop.write(
        "more.rnt",
        &format!("{PROGRAM}view big(id: int).\nbig(o) :- orders(o, _, a), a > 6.\n"),
    );
    shop.ok(&["define", "more.rnt"]);
    shop.ok(&["switch", "main"]);
    shop.commit("m", &["+orders(2, 1, 7)"]);
    let out = shop.ok(&["merge", "feature"]);
    assert!(out.starts_with("took the program of feature\n"), "{out}");
    assert_eq!(
        shop.rows("big", None),
        [vec![Value::from(1)], vec![Value::from(2)]]
    );
    shop.ok(&["verify"]);
    // Both sides change it differently: refused.
    shop.ok(&["switch", "feature"]);
    shop.write(
        "other.rnt",
        &format!("{PROGRAM}view small(id: int).\nsmall(o) :- orders(o, _, a), a < 6.\n"),
    );
    shop.ok(&["define", "other.rnt"]);
    shop.ok(&["switch", "main"]);
    shop.write(
        "third.rnt",
        &format!("{PROGRAM}view mid(id: int).\nmid(o) :- orders(o, _, 7).\n"),
    );
    shop.ok(&["define", "third.rnt"]);
    let before = refs(&shop);
    let stderr = shop.fails(&["merge", "feature"], 1);
    assert_one_line_error(
        &stderr,
        &[
            "both branches changed the program",
            "rnt diff --program HEAD feature",
        ],
    );
    assert_eq!(refs(&shop), before);
}

#[test]
fn gc_keeps_what_branches_tags_and_the_reflog_reach() {
    let shop = shop();
    shop.commit("second", &["+orders(2, 1, 5)"]);
    let second = shop.head().unwrap();
    shop.ok(&["tag", "v2"]);
    shop.ok(&["branch", "keep"]);
    shop.ok(&["reset", "HEAD~1"]);
    shop.ok(&["gc"]);
    for reference in ["v2", "keep", &second[..12]] {
        assert_eq!(shop.rows("orders", Some(reference)).len(), 2, "{reference}");
        shop.ok(&["verify", "--at", reference]);
    }
    // Deleting the branch and the tag leaves the reflog: still kept.
    shop.ok(&["branch", "-d", "keep"]);
    shop.ok(&["tag", "-d", "v2"]);
    shop.ok(&["gc"]);
    shop.ok(&["verify", "--at", &second[..12]]);
}

#[test]
fn new_commands_print_json_where_they_print_data() {
    let shop = shop();
    for args in [
        &["branch", "--format", "json"][..],
        &["tag", "--format", "json"],
        &["reflog", "--format", "json"],
        &["program", "--format", "json"],
    ] {
        let value = json(&shop.ok(args));
        assert!(value.is_array() || value.is_object(), "{args:?}: {value}");
    }
}

/// A store made before branches kept its history in a bare `main` ref naming a commit: it
/// reads as branch `main`, and the next write moves it to `heads/main` with the old value
/// as the reflog's first entry.
#[test]
fn a_store_from_before_branches_reads_and_moves_on() {
    use rnt_store::{commit_ref, ChunkStore, PackStore};
    let shop = shop();
    let head = shop.head().unwrap();
    let state = shop.state();
    {
        let chunks = PackStore::open(&shop.store()).unwrap();
        let record = chunks.get_ref("heads/main").unwrap().unwrap();
        let commit = rnt_store::Address::from_hex(&head).unwrap();
        commit_ref(&chunks, "main", None, Some(commit)).unwrap();
        commit_ref(&chunks, "heads/main", Some(record), None).unwrap();
    }
    assert_eq!(shop.head().unwrap(), head);
    assert_eq!(shop.state(), state);
    assert_eq!(shop.status()["branch"], "main");
    shop.ok(&["verify"]);
    let reflog = json(&shop.ok(&["reflog", "--format", "json"]));
    assert_eq!(reflog.as_array().unwrap().len(), 1);
    assert_eq!(reflog[0]["commit"], head.as_str());
    shop.commit("after", &["+orders(2, 1, 5)"]);
    let reflog = json(&shop.ok(&["reflog", "--format", "json"]));
    assert_eq!(reflog[0]["action"], "commit: after");
    assert_eq!(reflog[1]["commit"], head.as_str());
    assert_eq!(reflog[1]["action"], "the history before branches");
    let chunks = PackStore::open(&shop.store()).unwrap();
    assert_eq!(chunks.get_ref("main").unwrap(), None);
    assert!(chunks.get_ref("heads/main").unwrap().is_some());
}

/// Both branches giving keys of a keyed relation different tuples: exit 4, every such key
/// listed (one line each), nothing written; keys changed on one side only, or alike on
/// both, merge.
#[test]
fn a_merge_with_key_conflicts_exits_4_and_lists_every_key() {
    let shop = Shop::init();
    shop.write(
        "keyed.rnt",
        "relation customers(id: int, plan: str) key(id).\nview per_plan(plan: str, n: int).\nper_plan(p, count()) :- customers(_, p).\n",
    );
    shop.ok(&["define", "keyed.rnt"]);
    shop.commit(
        "base",
        &[
            "+customers(1, \"free\")",
            "+customers(2, \"free\")",
            "+customers(3, \"free\")",
        ],
    );
    shop.ok(&["branch", "feature"]);
    shop.commit(
        "ours",
        &[
            "+customers(1, \"pro\")",
            "+customers(2, \"team\")",
            "+customers(4, \"pro\")",
            "+customers(5, \"pro\")",
        ],
    );
    shop.ok(&["switch", "feature"]);
    shop.commit(
        "theirs",
        &[
            "+customers(1, \"team\")",
            "+customers(2, \"team\")",
            "+customers(3, \"pro\")",
            "+customers(4, \"free\")",
        ],
    );
    shop.ok(&["switch", "main"]);
    let before = refs(&shop);
    let stderr = shop.fails(&["merge", "feature"], 4);
    let lines: Vec<&str> = stderr.lines().collect();
    // Two keys, then how to resolve them (tests/merge_conflicts.rs).
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(lines[3].contains("--ours"), "{stderr}");
    assert!(
        lines[0].starts_with("error: cannot merge `feature`: 2 key(s)"),
        "{stderr}"
    );
    assert_eq!(
        lines[1],
        "conflict in customers at key id=1: ours customers(1, \"pro\"), theirs customers(1, \"team\")"
    );
    assert_eq!(
        lines[2],
        "conflict in customers at key id=4: ours customers(4, \"pro\"), theirs customers(4, \"free\")"
    );
    assert_eq!(refs(&shop), before);
    // Resolve on our side (take theirs for 1 and 4), then the merge goes through.
    shop.commit(
        "resolve",
        &["+customers(1, \"team\")", "+customers(4, \"free\")"],
    );
    shop.ok(&["merge", "feature"]);
    let rows = shop.rows("customers", None);
    let plans: Vec<(i64, &str)> = rows
        .iter()
        .map(|r| (r[0].as_i64().unwrap(), r[1].as_str().unwrap()))
        .collect();
    assert_eq!(
        plans,
        [
            (1, "team"),
            (2, "team"),
            (3, "pro"),
            (4, "free"),
            (5, "pro")
        ]
    );
    shop.ok(&["verify"]);
}
