//! Reading history from the command line: `REF^` and `~n` after any ref, `log [REF] [-n N]
//! [--relation R]`, `diff REF`, `program [--at REF]`, the note `diff` prints when programs
//! differ, and `diff --program` — each output format, and every error with exit 1 and
//! nothing changed.

mod common;

use common::{assert_one_line_error, Shop};

/// The shop program with a view over orders.
const SHOP_WITH_VIEW: &str = "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view big(id: int).
big(id) :- a > 100, orders(id, _, a).
";

/// A store with five commits, oldest first: define, two customers, an order, a second
/// define (adding a view that the existing order backfills), a big order.
fn history() -> Shop {
    let shop = Shop::defined();
    shop.commit(
        "customers",
        &["+customers(1, \"free\")", "+customers(2, \"pro\")"],
    );
    shop.commit("an order", &["+orders(10, 1, 150)"]);
    shop.write("view.rnt", SHOP_WITH_VIEW);
    shop.ok(&["define", "view.rnt"]);
    shop.commit("a big order", &["+orders(11, 2, 500)"]);
    shop
}

/// The commit ids of `rnt log --format json` with `args` added, newest first.
fn log_ids(shop: &Shop, args: &[&str]) -> Vec<String> {
    let mut all = vec!["log", "--format", "json"];
    all.extend_from_slice(args);
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(&shop.ok(&all)).expect("log prints JSON");
    entries
        .iter()
        .map(|e| e["commit"].as_str().expect("a commit id").to_string())
        .collect()
}

/// The ids at `positions` of `ids`.
fn pick(ids: &[String], positions: &[usize]) -> Vec<String> {
    positions.iter().map(|&at| ids[at].clone()).collect()
}

/// Asserts that the keys `"k": ` first occur in `json` in the order given.
fn assert_keys_in_order(json: &str, keys: &[&str]) {
    let at: Vec<usize> = keys
        .iter()
        .map(|k| {
            json.find(&format!("\"{k}\": "))
                .unwrap_or_else(|| panic!("no key {k:?} in {json}"))
        })
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "{keys:?} out of order in {json}"
    );
}

/// What must not move when a command fails: the head, its state, the whole log.
fn snapshot(shop: &Shop) -> (serde_json::Value, Vec<serde_json::Value>) {
    (shop.status(), shop.log())
}

#[test]
fn caret_and_tilde_follow_any_ref() {
    let shop = history();
    let ids = log_ids(&shop, &[]);
    assert_eq!(ids.len(), 5);
    let prefix = &ids[0][..8];
    let state_of = |reference: &str| -> String {
        let out = shop.ok(&["program", "--at", reference, "--format", "json"]);
        let json: serde_json::Value = serde_json::from_str(&out).expect("program prints JSON");
        json["commit"].as_str().expect("a commit").to_string()
    };
    assert_eq!(state_of("HEAD^"), ids[1]);
    assert_eq!(state_of("HEAD^^"), ids[2]);
    assert_eq!(state_of("HEAD^~1"), ids[2]);
    assert_eq!(state_of("HEAD~2^"), ids[3]);
    assert_eq!(state_of(&format!("{prefix}^")), ids[1]);
    assert_eq!(state_of(&format!("{prefix}~2")), ids[2]);
    assert_eq!(state_of(&format!("{prefix}~4")), ids[4]);
    assert_eq!(state_of(&format!("{}~1", &ids[1][..10])), ids[2]);
    assert_eq!(state_of("main^"), ids[1]);
}

#[test]
fn refs_past_the_root_or_malformed_are_errors_that_change_nothing() {
    let shop = history();
    let before = snapshot(&shop);
    let prefix = shop.head().expect("a head")[..8].to_string();
    let cases: Vec<(String, Vec<&str>)> = vec![
        ("HEAD~5".into(), vec!["`HEAD~5`", "past the root commit"]),
        ("HEAD^^^^^".into(), vec!["past the root commit"]),
        (format!("{prefix}~9"), vec!["past the root commit"]),
        ("HEAD~x".into(), vec!["`HEAD~x`"]),
        ("HEAD^y".into(), vec!["`HEAD^y`"]),
        ("nosuch^".into(), vec!["unknown reference `nosuch`"]),
    ];
    for (reference, needles) in &cases {
        for args in [
            vec!["show", "orders", "--at", reference.as_str()],
            vec!["log", reference.as_str()],
            vec!["diff", reference.as_str()],
            vec!["program", "--at", reference.as_str()],
        ] {
            let stderr = shop.fails(&args, 1);
            assert_one_line_error(&stderr, needles);
        }
    }
    // A state hash names no commit, so it has no parent.
    let state = shop.state();
    let stderr = shop.fails(
        &["show", "orders", "--at", &format!("{}^", &state[..12])],
        1,
    );
    assert_one_line_error(&stderr, &["names a state, not a commit"]);
    let stderr = shop.fails(&["diff", &state[..12]], 1);
    assert_one_line_error(&stderr, &["no parent"]);
    let stderr = shop.fails(&["log", &state[..12]], 1);
    assert_one_line_error(&stderr, &["names a state, not a commit"]);
    assert_eq!(snapshot(&shop), before);
}

#[test]
fn log_from_a_ref_limited_and_by_relation() {
    let shop = history();
    let ids = log_ids(&shop, &[]);
    assert_eq!(log_ids(&shop, &["HEAD"]), ids);
    assert_eq!(log_ids(&shop, &["HEAD~2"]), pick(&ids, &[2, 3, 4]));
    assert_eq!(log_ids(&shop, &[&ids[1][..8]]), pick(&ids, &[1, 2, 3, 4]));
    assert_eq!(log_ids(&shop, &["-n", "2"]), pick(&ids, &[0, 1]));
    assert_eq!(log_ids(&shop, &["-n", "0"]), Vec::<String>::new());
    assert_eq!(log_ids(&shop, &["-n", "9"]), ids);
    assert_eq!(log_ids(&shop, &["HEAD^", "-n", "1"]), pick(&ids, &[1]));
    // Base relations: the commits whose change counts name them.
    assert_eq!(
        log_ids(&shop, &["--relation", "orders"]),
        pick(&ids, &[0, 2])
    );
    assert_eq!(
        log_ids(&shop, &["--relation", "customers"]),
        pick(&ids, &[3])
    );
    assert_eq!(
        log_ids(&shop, &["--relation", "orders", "-n", "1"]),
        pick(&ids, &[0])
    );
    assert_eq!(
        log_ids(&shop, &["HEAD^", "--relation", "orders"]),
        pick(&ids, &[2])
    );
    // A derived relation: backfilled by the define, maintained by the big order.
    assert_eq!(log_ids(&shop, &["--relation", "big"]), pick(&ids, &[0, 1]));
    // Declared where the history starts but never touched in it: nothing, no error.
    assert_eq!(
        log_ids(&shop, &["HEAD~4", "--relation", "orders"]),
        Vec::<String>::new()
    );
    // Not declared where the history starts, nor touched in it: unknown.
    let stderr = shop.fails(&["log", "HEAD~2", "--relation", "big"], 1);
    assert_one_line_error(&stderr, &["unknown relation `big`"]);

    // The table keeps its columns; a filter that keeps nothing prints nothing.
    let table = shop.ok(&["log", "-n", "1"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2, "{table}");
    assert!(lines[0].starts_with("commit"), "{table}");
    assert!(lines[1].starts_with(&ids[0][..12]), "{table}");
    assert!(lines[1].contains("a big order"), "{table}");
    let table = shop.ok(&["log", "--relation", "customers"]);
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(table.contains("customers +2 -0"), "{table}");
    assert_eq!(shop.ok(&["log", "-n", "0"]), "");
}

#[test]
fn log_json_keeps_its_shape() {
    let shop = history();
    let text = shop.ok(&["log", "HEAD~1", "-n", "1", "--format", "json"]);
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).expect("log prints JSON");
    assert_eq!(entries.len(), 1);
    assert_keys_in_order(
        &text,
        &[
            "commit", "state", "parents", "time", "message", "changes", "stats",
        ],
    );
    assert_eq!(entries[0]["message"], "define view.rnt");
}

#[test]
fn log_errors_change_nothing() {
    let shop = history();
    let before = snapshot(&shop);
    let stderr = shop.fails(&["log", "--relation", "nosuch"], 1);
    assert_one_line_error(&stderr, &["unknown relation `nosuch`"]);
    let stderr = shop.fails(&["log", "-n", "many"], 1);
    assert!(stderr.contains("many"), "{stderr}");
    let stderr = shop.fails(&["log", "nosuchref"], 1);
    assert_one_line_error(&stderr, &["nosuchref"]);
    assert_eq!(snapshot(&shop), before);

    let empty = Shop::init();
    assert_eq!(empty.ok(&["log"]), "no commits yet\n");
    let stderr = empty.fails(&["log", "HEAD"], 1);
    assert_one_line_error(&stderr, &["no commits yet"]);
}

#[test]
fn diff_of_one_ref_is_the_diff_from_its_first_parent() {
    let shop = history();
    for reference in ["HEAD", "HEAD~1", "HEAD~2", "HEAD~3"] {
        let one = shop.run(&["diff", reference]);
        let two = shop.run(&["diff", &format!("{reference}^"), reference]);
        assert_eq!(one.code, 0, "{}", one.stderr);
        assert_eq!(
            (one.stdout, one.stderr),
            (two.stdout, two.stderr),
            "{reference}"
        );
    }
    assert_eq!(shop.ok(&["diff", "HEAD"]), "+orders(11, 2, 500)\n");
    assert_eq!(
        shop.ok(&["diff", "--all", "HEAD"]),
        "+big(11)\n+orders(11, 2, 500)\n"
    );
    assert_eq!(shop.ok(&["diff", "HEAD", "HEAD~1", "big"]), "-big(11)\n");
    let prefix = shop.head().expect("a head")[..8].to_string();
    assert_eq!(shop.ok(&["diff", &prefix]), "+orders(11, 2, 500)\n");
    // The root commit diffs from the empty state: its program is new, its relations empty.
    let root = shop.run(&["diff", "HEAD~4"]);
    assert_eq!(root.code, 0, "{}", root.stderr);
    assert_eq!(root.stdout, "");
    assert_eq!(root.stderr, "note: the program differs; see rnt program\n");
}

#[test]
fn diff_across_a_program_change_notes_it_on_stderr() {
    let shop = history();
    let run = shop.run(&["diff", "HEAD~3", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "+orders(10, 1, 150)\n+orders(11, 2, 500)\n");
    assert_eq!(run.stderr, "note: the program differs; see rnt program\n");
    let run = shop.run(&["diff", "HEAD~1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "note: the program differs; see rnt program\n");
    // Same program: no note.
    let run = shop.run(&["diff", "HEAD~4", "HEAD~2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
}

#[test]
fn diff_program_is_a_unified_diff_of_the_canonical_texts() {
    let shop = history();
    assert_eq!(shop.ok(&["diff", "--program", "HEAD~4", "HEAD~2"]), "");
    assert_eq!(shop.ok(&["diff", "--program", "HEAD"]), "");
    let run = shop.run(&["diff", "--program", "HEAD~2", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "\
--- HEAD~2
+++ HEAD
@@ -1,2 +1,5 @@
 relation customers(id: int, plan: str).
 relation orders(id: int, customer: int, amount: int).
+view big(id: int).
+
+big(id) :- a > 100, orders(id, _, a).
"
    );
    // One REF: from its first parent, named `REF^`.
    let one = shop.ok(&["diff", "--program", "HEAD~1"]);
    assert_eq!(
        one,
        run.stdout
            .replace("HEAD~2", "HEAD~1^")
            .replace("+++ HEAD\n", "+++ HEAD~1\n")
    );
    let back = shop.ok(&["diff", "--program", "HEAD", "HEAD~2"]);
    assert!(
        back.starts_with("--- HEAD\n+++ HEAD~2\n@@ -1,5 +1,2 @@\n"),
        "{back}"
    );
    assert!(back.contains("\n-view big(id: int).\n"), "{back}");
    // The root commit's program against the empty one.
    let root = shop.ok(&["diff", "--program", "HEAD~4"]);
    assert!(
        root.starts_with("--- HEAD~4^\n+++ HEAD~4\n@@ -0,0 +1,2 @@\n+relation customers"),
        "{root}"
    );
}

#[test]
fn diff_errors_change_nothing() {
    let shop = history();
    let before = snapshot(&shop);
    let stderr = shop.fails(&["diff", "--program", "HEAD", "HEAD", "orders"], 1);
    assert!(stderr.contains("--program"), "{stderr}");
    let stderr = shop.fails(&["diff", "--program", "--all", "HEAD"], 1);
    assert!(stderr.contains("--all"), "{stderr}");
    let stderr = shop.fails(&["diff", "HEAD", "HEAD", "nosuchrel"], 1);
    assert_one_line_error(&stderr, &["nosuchrel"]);
    let stderr = shop.fails(&["diff"], 1);
    assert!(stderr.contains("REF"), "{stderr}");
    assert_eq!(snapshot(&shop), before);
}

#[test]
fn program_prints_the_canonical_text() {
    let shop = history();
    let text = shop.ok(&["program"]);
    assert_eq!(
        text,
        "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view big(id: int).

big(id) :- a > 100, orders(id, _, a).
"
    );
    assert_eq!(shop.ok(&["program", "--at", "HEAD"]), text);
    let old = shop.ok(&["program", "--at", "HEAD~2"]);
    assert_eq!(
        old,
        "relation customers(id: int, plan: str).\nrelation orders(id: int, customer: int, amount: int).\n"
    );

    let text_json = shop.ok(&["program", "--at", "HEAD~2", "--format", "json"]);
    assert_keys_in_order(&text_json, &["commit", "state", "program"]);
    let json: serde_json::Value = serde_json::from_str(&text_json).expect("program prints JSON");
    assert_eq!(json.as_object().map(serde_json::Map::len), Some(3));
    let log = shop.log();
    assert_eq!(json["commit"], log[2]["commit"]);
    assert_eq!(json["state"], log[2]["state"]);
    assert_eq!(json["program"], old.as_str());

    // Named by its state hash: no commit.
    let state = shop.state();
    let json: serde_json::Value =
        serde_json::from_str(&shop.ok(&["program", "--at", &state[..12], "--format", "json"]))
            .expect("program prints JSON");
    assert_eq!(json["commit"], serde_json::Value::Null);
    assert_eq!(json["state"], state.as_str());
    assert_eq!(json["program"], text.as_str());
}

#[test]
fn program_errors_change_nothing() {
    let shop = history();
    let before = snapshot(&shop);
    let stderr = shop.fails(&["program", "--at", "nosuchref"], 1);
    assert_one_line_error(&stderr, &["nosuchref"]);
    let stderr = shop.fails(&["program", "--format", "yaml"], 1);
    assert!(stderr.contains("yaml"), "{stderr}");
    assert_eq!(snapshot(&shop), before);

    // Before the first commit the program is empty.
    let empty = Shop::init();
    assert_eq!(empty.ok(&["program"]), "");
    let json: serde_json::Value =
        serde_json::from_str(&empty.ok(&["program", "--format", "json"])).expect("JSON");
    assert_eq!(json["commit"], serde_json::Value::Null);
    assert_eq!(json["program"], "");
}
