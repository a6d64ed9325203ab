//! Guards every subcommand end to end through the binary: what each prints (tables, CSV,
//! JSON shapes), how the store is found, references, and that `diff` output is a change
//! file that reproduces the target state.

mod common;

use common::{assert_one_line_error, Shop, RNT, SHOP};
use serde_json::{json, Value};
use std::process::Command;

fn hex(value: &Value) -> &str {
    let text = value.as_str().expect("a hex string");
    assert_eq!(text.len(), 64, "{text}");
    assert!(
        text.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{text}"
    );
    text
}

#[test]
fn init_creates_a_store_once() {
    let shop = Shop::bare();
    let out = shop.ok(&["init"]);
    assert!(
        out.starts_with("initialized an empty rnt store in "),
        "{out}"
    );
    assert!(shop.store().is_dir());
    let err = shop.fails(&["init"], 1);
    assert_one_line_error(&err, &["already exists"]);
    // init makes no commit.
    assert_eq!(shop.head(), None);
    assert!(shop.log().is_empty());
    assert_eq!(shop.ok(&["log"]), "no commits yet\n");
}

#[test]
fn init_records_the_backend_and_both_backends_work() {
    for backend in ["packs", "sled"] {
        let shop = Shop::bare();
        let out = shop.ok(&["init", "--backend", backend]);
        assert!(out.ends_with(&format!("({backend} backend)\n")), "{out}");
        let marker = std::fs::read_to_string(shop.store().join("rnt-store")).unwrap();
        assert_eq!(marker, format!("rnt-store 1\nbackend {backend}\n"));
        shop.write(
            "p.rnt",
            "relation r(x: int).\nview v(x: int).\nv(x) :- r(x).\n",
        );
        shop.ok(&["define", "p.rnt"]);
        shop.commit("one", &["+r(1)", "+r(2)"]);
        assert_eq!(shop.ok(&["show", "v", "--format", "csv"]), "x\n1\n2\n");
        shop.ok(&["verify"]);
    }
    let shop = Shop::bare();
    let err = shop.fails(&["init", "--backend", "btree"], 1);
    assert!(err.contains("btree"), "{err}");
}

#[test]
fn init_at_an_explicit_path_and_refusals() {
    let shop = Shop::bare();
    let store = shop.dir().join("elsewhere");
    let store = store.to_str().unwrap();
    shop.ok(&["--store", store, "init"]);
    assert!(!shop.store().exists());
    assert!(shop
        .ok(&["--store", store, "status", "--format", "json"])
        .contains("\"commit\": null"));
    // A folder with other files is not taken over.
    shop.write("notes.txt", "x");
    let err = shop.fails(&["--store", shop.dir().to_str().unwrap(), "init"], 1);
    assert_one_line_error(&err, &["not an empty folder"]);
}

#[test]
fn a_missing_store_is_a_clear_error() {
    let shop = Shop::bare();
    for args in [
        &["status"][..],
        &["log"],
        &["show", "orders"],
        &["commit", "-m", "x", "+orders(1, 2, 3)"],
    ] {
        let err = shop.fails(args, 1);
        assert_eq!(
            err,
            "error: no rnt store found here or in any parent folder (run `rnt init`)\n"
        );
    }
    let err = shop.fails(&["--store", "nowhere", "status"], 1);
    assert_one_line_error(&err, &["no rnt store at nowhere"]);
    // Naming the working folder instead of the store folder gets a hint.
    let shop = Shop::init();
    let err = shop.fails(&["--store", shop.dir().to_str().unwrap(), "status"], 1);
    assert_one_line_error(&err, &["did you mean", ".rnt"]);
}

#[test]
fn the_store_is_found_from_a_subfolder() {
    let shop = Shop::defined();
    let sub = shop.dir().join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    let run = Command::new(RNT)
        .args(["commit", "-m", "from below", "+orders(1, 2, 3)"])
        .current_dir(&sub)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        shop.rows("orders", None),
        vec![vec![json!(1), json!(2), json!(3)]]
    );
}

#[test]
fn status_before_and_after_commits() {
    let shop = Shop::init();
    let status = shop.status();
    assert_eq!(status["commit"], Value::Null);
    hex(&status["state"]);
    assert_eq!(status["relations"], json!([]));
    let empty_state = status["state"].clone();
    // The empty state's hash does not depend on the store.
    assert_eq!(Shop::init().status()["state"], empty_state);

    shop.write(
        "kinds.rnt",
        "relation orders(id: int, customer: int, amount: int).\nview big(id: int).\nephemeral recent(id: int).\ndenial bad(id: int).\n",
    );
    shop.ok(&["define", "kinds.rnt"]);
    shop.commit("two orders", &["+orders(1, 7, 30)", "+orders(2, 7, 40)"]);
    let status = shop.status();
    let keys: Vec<&String> = status.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["branch", "commit", "relations", "state"], "{status}");
    assert_eq!(status["branch"], "main");
    hex(&status["commit"]);
    hex(&status["state"]);
    let relations = status["relations"].as_array().unwrap();
    let summary: Vec<(String, String, Value)> = relations
        .iter()
        .map(|r| {
            assert_eq!(r.as_object().unwrap().len(), 4, "{r}");
            (
                r["name"].as_str().unwrap().into(),
                r["kind"].as_str().unwrap().into(),
                r["count"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("bad".into(), "denial".into(), Value::Null),
            ("big".into(), "view".into(), json!(0)),
            ("orders".into(), "relation".into(), json!(2)),
            ("recent".into(), "ephemeral".into(), Value::Null),
        ]
    );
    assert_eq!(relations[0]["root"], Value::Null);
    assert_eq!(relations[3]["root"], Value::Null);
    hex(&relations[1]["root"]);
    hex(&relations[2]["root"]);
    let table = shop.ok(&["status"]);
    assert!(table.contains("\norders    relation       2  "), "{table}");
    // Derived relations exist but cannot be changed directly, nor imported into.
    assert_eq!(shop.rows("big", None), Vec::<Vec<Value>>::new());
    assert_eq!(shop.rows("bad", None), Vec::<Vec<Value>>::new());
    let err = shop.fails(&["commit", "-m", "x", "+big(1)"], 1);
    assert_one_line_error(&err, &["big", "view"]);
    // Views without rules recompute to empty: verify passes.
    let out = shop.ok(&["verify"]);
    assert!(out.starts_with("verified: 1 materialized view"), "{out}");
}

#[test]
fn define_reports_program_errors_with_snippets() {
    let shop = Shop::init();
    shop.write(
        "bad.rnt",
        "relation orders(id: int).\nrelation orders(id: str).\nrelation c(x: flaot).\n",
    );
    let run = shop.run(&["define", "bad.rnt"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("--> bad.rnt:3:15"), "{}", run.stderr);
    assert!(run.stderr.contains("^"), "{}", run.stderr);
    assert_eq!(shop.head(), None);
    // A missing file is a one-line error.
    assert_one_line_error(
        &shop.fails(&["define", "nope.rnt"], 1),
        &["cannot read nope.rnt"],
    );
    // Defining the same program twice makes one commit.
    shop.write("shop.rnt", SHOP);
    let out = shop.ok(&["define", "shop.rnt"]);
    assert!(out.starts_with("committed "), "{out}");
    assert_eq!(
        shop.ok(&["define", "shop.rnt", "-m", "again"]),
        "nothing to commit (the program is unchanged)\n"
    );
    let log = shop.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["message"], "define shop.rnt");
}

#[test]
fn define_refuses_dropping_a_relation_with_tuples() {
    let shop = Shop::defined();
    shop.commit("one", &["+customers(1, \"pro\")"]);
    shop.write(
        "less.rnt",
        "relation orders(id: int, customer: int, amount: int).\n",
    );
    let err = shop.fails(&["define", "less.rnt"], 1);
    assert_one_line_error(&err, &["customers", "holds 1 tuples"]);
    // An empty relation can go.
    shop.write("fewer.rnt", "relation customers(id: int, plan: str).\n");
    shop.ok(&["define", "fewer.rnt"]);
    let names: Vec<Value> = shop.status()["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("customers")]);
}

#[test]
fn commit_prints_what_changed() {
    let shop = Shop::defined();
    let out = shop.commit(
        "first",
        &[
            "+orders(1, 7, 30)",
            "+orders(2, 7, 40)",
            "+customers(7, \"pro\")",
        ],
    );
    let (head, rest) = out
        .trim_end()
        .split_once(" (state ")
        .expect("committed X (state Y): ...");
    assert_eq!(head.len(), "committed ".len() + 12, "{out}");
    assert!(head.starts_with("committed "));
    assert_eq!(&rest[12..], "): customers +1 -0, orders +2 -0", "{out}");
    assert!(shop
        .head()
        .unwrap()
        .starts_with(&head["committed ".len()..]));
    let out = shop.commit("update", &["-orders(1, 7, 30)", "+orders(1, 7, 35)"]);
    assert!(out.ends_with("): orders +1 -1\n"), "{out}");
    // Options may follow the changes, and `--` is accepted.
    let out = shop.ok(&["commit", "-orders(2, 7, 40)", "-m", "after"]);
    assert!(out.ends_with("): orders +0 -1\n"), "{out}");
    shop.ok(&["commit", "-m", "dashes", "--", "+orders(5, 7, 1)"]);
    // A no-op changes nothing: no commit.
    let head = shop.head();
    assert_eq!(
        shop.commit("noop", &["+orders(1, 7, 35)", "-orders(99, 1, 1)"]),
        "nothing to commit\n"
    );
    assert_eq!(shop.commit("empty", &[]), "nothing to commit\n");
    assert_eq!(shop.head(), head);
    // -m is required.
    let err = shop.fails(&["commit", "+orders(3, 1, 1)"], 1);
    assert_one_line_error(&err, &["--message"]);
    let messages: Vec<Value> = shop.log().iter().map(|c| c["message"].clone()).collect();
    assert_eq!(
        messages,
        vec![
            json!("dashes"),
            json!("after"),
            json!("update"),
            json!("first"),
            json!("define shop.rnt")
        ]
    );
}

#[test]
fn commit_reads_a_change_file_and_stdin() {
    let shop = Shop::defined();
    shop.write("changes.txt", "# customers first\n+customers(1, \"free\")\n\n+customers(2, \"a \\\"quoted\\\", plan\")  # comment\n");
    let out = shop.ok(&[
        "commit",
        "-m",
        "file",
        "-f",
        "changes.txt",
        "+orders(1, 1, 10)",
    ]);
    assert!(out.ends_with("): customers +2 -0, orders +1 -0\n"), "{out}");
    let run = shop.run_with_stdin(
        &["commit", "-m", "stdin", "-f", "-"],
        "+orders(2, 2, 20)\n-customers(1, \"free\")\n",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.ends_with("): customers +0 -1, orders +1 -0\n"),
        "{run:?}"
    );
    assert_eq!(
        shop.rows("customers", None),
        vec![vec![json!(2), json!("a \"quoted\", plan")]]
    );
    let out = shop.ok(&["commit", "-m", "stats", "--stats", "+orders(3, 3, 30)"]);
    let stats = out.lines().nth(1).expect("a stats line");
    assert!(stats.starts_with("stats: nodes_written="), "{out}");
}

#[test]
fn import_streams_csv_into_one_commit() {
    let shop = Shop::defined();
    // Columns in any order, quoted fields, CRLF, spaces around ints.
    shop.write(
        "customers.csv",
        "plan,id\r\n\"pro, yearly\",1\r\nfree, 2 \r\n\"say \"\"hi\"\"\",3\r\n",
    );
    let out = shop.ok(&["import", "customers", "customers.csv"]);
    assert!(
        out.starts_with("committed ") && out.ends_with("): customers +3 -0\n"),
        "{out}"
    );
    assert_eq!(
        shop.log()[0]["message"],
        "import customers from customers.csv"
    );
    assert_eq!(
        shop.rows("customers", None),
        vec![
            vec![json!(1), json!("pro, yearly")],
            vec![json!(2), json!("free")],
            vec![json!(3), json!("say \"hi\"")]
        ]
    );
    // Importing rows that are all present changes nothing.
    let out = shop.ok(&["import", "customers", "customers.csv", "-m", "again"]);
    assert!(out.starts_with("nothing to commit\n"), "{out}");
    // CSV out, CSV back in: the same relation.
    let csv = shop.ok(&["show", "customers", "--format", "csv"]);
    assert_eq!(
        csv,
        "id,plan\n1,\"pro, yearly\"\n2,free\n3,\"say \"\"hi\"\"\"\n"
    );
    let other = Shop::defined();
    other.write("back.csv", &csv);
    other.ok(&["import", "customers", "back.csv"]);
    assert_eq!(
        other.status()["relations"][0]["root"],
        shop.status()["relations"][0]["root"]
    );
    // Standard input works too.
    let run = shop.run_with_stdin(
        &["import", "orders", "-"],
        "id,customer,amount\n1,1,10\n1,1,10\n2,1,20\n",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.ends_with("): orders +2 -0\n"), "{run:?}");
}

#[test]
fn log_json_shape() {
    let shop = Shop::defined();
    shop.commit("first", &["+orders(1, 7, 30)", "+customers(7, \"pro\")"]);
    shop.commit("second\nwith a body", &["-orders(1, 7, 30)"]);
    let log = shop.log();
    assert_eq!(log.len(), 3);
    for (i, entry) in log.iter().enumerate() {
        let keys: Vec<&str> = entry
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = vec![
            "changes", "commit", "message", "parents", "state", "stats", "time",
        ];
        let mut keys = keys;
        keys.sort();
        expected.sort();
        assert_eq!(keys, expected);
        hex(&entry["commit"]);
        hex(&entry["state"]);
        let time = entry["time"].as_str().unwrap();
        assert_eq!(time.len(), 20, "{time}");
        assert!(
            time.ends_with('Z') && &time[4..5] == "-" && &time[10..11] == "T",
            "{time}"
        );
        let parents = entry["parents"].as_array().unwrap();
        match log.get(i + 1) {
            Some(parent) => assert_eq!(parents, &vec![parent["commit"].clone()]),
            None => assert!(parents.is_empty()),
        }
    }
    assert_eq!(log[0]["message"], "second\nwith a body");
    assert_eq!(
        log[0]["changes"],
        json!({"orders": {"inserted": 0, "deleted": 1}})
    );
    assert_eq!(
        log[1]["changes"],
        json!({"customers": {"inserted": 1, "deleted": 0}, "orders": {"inserted": 1, "deleted": 0}})
    );
    assert_eq!(log[2]["changes"], json!({}));
    assert_eq!(log[0]["state"].as_str(), Some(shop.state().as_str()));
    // The table has one line per commit under a header.
    let table = shop.ok(&["log"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(lines[0].starts_with("commit"), "{table}");
    assert!(
        lines[1].starts_with(&log[0]["commit"].as_str().unwrap()[..12]),
        "{table}"
    );
    assert!(
        lines[1].contains("second …") && lines[1].contains("orders +0 -1"),
        "{table}"
    );
}

#[test]
fn log_time_is_the_commit_time_in_utc() {
    let shop = Shop::defined();
    let run = shop
        .command(&["commit", "-m", "timed", "+orders(1, 1, 1)"])
        .env("RNT_COMMIT_TIME", "1795980600")
        .output()
        .unwrap();
    assert!(run.status.success());
    assert_eq!(shop.log()[0]["time"], "2026-11-29T19:30:00Z");
}

#[test]
fn show_formats() {
    let shop = Shop::init();
    shop.write("t.rnt", "relation t(n: int, s: str, b: bool).\n");
    shop.ok(&["define", "t.rnt"]);
    shop.commit(
        "rows",
        &[
            "+t(-5, \"a,b\", true)",
            "+t(10, \" padded \", false)",
            "+t(2, \"line\\nbreak\", true)",
            "+t(2, \"\", false)",
        ],
    );
    // JSON: key (tuple) order, ints as numbers, bools as bools.
    assert_eq!(
        shop.rows("t", None),
        vec![
            vec![json!(-5), json!("a,b"), json!(true)],
            vec![json!(2), json!(""), json!(false)],
            vec![json!(2), json!("line\nbreak"), json!(true)],
            vec![json!(10), json!(" padded "), json!(false)],
        ]
    );
    let csv = shop.ok(&["show", "t", "--format", "csv"]);
    assert_eq!(
        csv,
        "n,s,b\n-5,\"a,b\",true\n2,\"\",false\n2,\"line\nbreak\",true\n10,\" padded \",false\n"
    );
    let table = shop.ok(&["show", "t"]);
    assert_eq!(table, " n  s            b\n-5  a,b          true\n 2               false\n 2  line\\nbreak  true\n10   padded      false\n(4 tuples)\n");
    // An empty relation.
    shop.write(
        "u.rnt",
        "relation t(n: int, s: str, b: bool).\nrelation u(x: int).\n",
    );
    shop.ok(&["define", "u.rnt"]);
    assert_eq!(shop.ok(&["show", "u", "--format", "json"]).trim(), "[]");
    assert_eq!(shop.ok(&["show", "u", "--format", "csv"]), "x\n");
    assert_eq!(shop.ok(&["show", "u"]), "x\n(0 tuples)\n");
    assert_one_line_error(
        &shop.fails(&["show", "nope"], 1),
        &["unknown relation `nope`", "t, u"],
    );
    assert_one_line_error(&shop.fails(&["show", "t", "--format", "xml"], 1), &["xml"]);
}

#[test]
fn show_at_older_states() {
    let shop = Shop::defined();
    shop.commit("c1", &["+orders(1, 1, 10)"]);
    shop.commit("c2", &["+orders(2, 1, 20)"]);
    shop.commit("c3", &["-orders(1, 1, 10)"]);
    let log = shop.log();
    let ids: Vec<&str> = log.iter().map(|c| c["commit"].as_str().unwrap()).collect();
    let states: Vec<&str> = log.iter().map(|c| c["state"].as_str().unwrap()).collect();
    let c2 = vec![
        vec![json!(1), json!(1), json!(10)],
        vec![json!(2), json!(1), json!(20)],
    ];
    let c1 = vec![vec![json!(1), json!(1), json!(10)]];
    assert_eq!(shop.rows("orders", Some("HEAD~1")), c2);
    assert_eq!(shop.rows("orders", Some("HEAD~2")), c1);
    assert_eq!(shop.rows("orders", Some("main~2")), c1);
    assert_eq!(
        shop.rows("orders", Some("HEAD~3")),
        Vec::<Vec<Value>>::new()
    );
    assert_eq!(shop.rows("orders", Some(&ids[1][..8])), c2);
    assert_eq!(shop.rows("orders", Some(&ids[2][..4])), c1);
    assert_eq!(shop.rows("orders", Some(&ids[2].to_uppercase()[..10])), c1);
    assert_eq!(shop.rows("orders", Some(&states[1][..6])), c2);
    assert_eq!(shop.rows("orders", Some(states[2])), c1);
    assert_eq!(shop.rows("orders", Some("main")), shop.rows("orders", None));
    // A relation the older state does not have.
    assert_one_line_error(
        &shop.fails(&["show", "orders", "--at", "HEAD~4"], 1),
        &["HEAD~4"],
    );
    // A state hash has no ancestors.
    assert_one_line_error(
        &shop.fails(
            &["show", "orders", "--at", &format!("{}~1", &states[0][..8])],
            1,
        ),
        &["not a commit"],
    );
}

#[test]
fn diff_prints_a_change_file_that_reproduces_the_target() {
    let shop = Shop::defined();
    shop.commit(
        "a",
        &[
            "+customers(1, \"free\")",
            "+customers(2, \"pro\")",
            "+orders(1, 1, 10)",
            "+orders(2, 2, 20)",
        ],
    );
    let a_changes = shop.ok(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(
        a_changes,
        "+customers(1, \"free\")\n+customers(2, \"pro\")\n+orders(1, 1, 10)\n+orders(2, 2, 20)\n"
    );
    shop.commit(
        "b",
        &[
            "-customers(1, \"free\")",
            "+customers(1, \"pro \\\"x\\\"\")",
            "-orders(2, 2, 20)",
            "+orders(2, 2, 25)",
            "+orders(3, 1, -4)",
        ],
    );
    let diff = shop.ok(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(
        diff,
        "-customers(1, \"free\")\n+customers(1, \"pro \\\"x\\\"\")\n-orders(2, 2, 20)\n+orders(2, 2, 25)\n+orders(3, 1, -4)\n"
    );
    // Only one relation; the reverse direction.
    assert_eq!(
        shop.ok(&["diff", "HEAD~1", "HEAD", "customers"]),
        "-customers(1, \"free\")\n+customers(1, \"pro \\\"x\\\"\")\n"
    );
    // Sorted by tuple, whatever the sign.
    assert_eq!(
        shop.ok(&["diff", "HEAD", "HEAD~1", "customers"]),
        "+customers(1, \"free\")\n-customers(1, \"pro \\\"x\\\"\")\n"
    );
    assert_eq!(shop.ok(&["diff", "HEAD", "HEAD"]), "");
    assert_eq!(shop.ok(&["diff", "HEAD~1", "HEAD", "--all"]), diff);

    // Replay in a second store: the same program, A's changes, then the diff.
    let other = Shop::defined();
    other.write("a.txt", &a_changes);
    other.ok(&["commit", "-m", "a", "-f", "a.txt"]);
    assert_eq!(other.state(), shop.log()[1]["state"].as_str().unwrap());
    other.write("b.txt", &diff);
    other.ok(&["commit", "-m", "b", "-f", "b.txt"]);
    assert_eq!(other.state(), shop.state());
    // From the empty program's first state to the head: also a valid change file.
    let full = shop.ok(&["diff", "HEAD~2", "HEAD"]);
    let third = Shop::defined();
    third.write("full.txt", &full);
    third.ok(&["commit", "-m", "all at once", "-f", "full.txt"]);
    assert_eq!(third.state(), shop.state());
    assert_one_line_error(
        &shop.fails(&["diff", "HEAD", "HEAD", "nope"], 1),
        &["unknown relation `nope`"],
    );
}

/// A shop with views, an ephemeral relation and a denial.
const SHOP_WITH_RULES: &str = "\
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
view order_plan(id: int, plan: str).
view plan_total(plan: str, total: int, n: int).
ephemeral big_order(id: int).
denial orphan(id: int).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
big_order(i) :- orders(i, _, a), a > 900.
orphan(i) :- orders(i, c, _), not customers(c, _).
";

#[test]
fn views_are_maintained_shown_diffed_and_verified() {
    let shop = Shop::init();
    shop.write("rules.rnt", SHOP_WITH_RULES);
    shop.ok(&["define", "rules.rnt"]);
    shop.commit(
        "a",
        &[
            "+customers(1, \"free\")",
            "+customers(2, \"pro\")",
            "+orders(1, 1, 30)",
            "+orders(2, 2, 950)",
        ],
    );
    shop.commit("b", &["+orders(3, 2, 50)", "-orders(1, 1, 30)"]);
    assert_eq!(
        shop.rows("order_plan", None),
        vec![vec![json!(2), json!("pro")], vec![json!(3), json!("pro")]]
    );
    assert_eq!(
        shop.rows("plan_total", None),
        vec![vec![json!("pro"), json!(1000), json!(2)]]
    );
    assert_eq!(shop.rows("big_order", None), vec![vec![json!(2)]]);
    assert_eq!(shop.rows("orphan", None), Vec::<Vec<Value>>::new());
    assert_eq!(
        shop.rows("plan_total", Some("HEAD~1")),
        vec![
            vec![json!("free"), json!(30), json!(1)],
            vec![json!("pro"), json!(950), json!(1)]
        ]
    );
    // Base relations only by default; a named view, or --all, adds derived changes.
    assert_eq!(
        shop.ok(&["diff", "HEAD~1", "HEAD"]),
        "-orders(1, 1, 30)\n+orders(3, 2, 50)\n"
    );
    assert_eq!(
        shop.ok(&["diff", "HEAD~1", "HEAD", "plan_total"]),
        "-plan_total(\"free\", 30, 1)\n-plan_total(\"pro\", 950, 1)\n+plan_total(\"pro\", 1000, 2)\n"
    );
    // Ephemeral relations are evaluated in both states.
    assert_eq!(
        shop.ok(&["diff", "HEAD~2", "HEAD", "big_order"]),
        "+big_order(2)\n"
    );
    assert_eq!(
        shop.ok(&["diff", "HEAD", "HEAD~2", "big_order"]),
        "-big_order(2)\n"
    );
    assert_eq!(shop.ok(&["diff", "HEAD~1", "HEAD", "orphan"]), "");
    let all = shop.ok(&["diff", "HEAD~1", "HEAD", "--all"]);
    assert!(
        all.contains("-order_plan(1, \"free\")\n+order_plan(3, \"pro\")\n"),
        "{all}"
    );
    // Status: counts for views, null for ephemeral relations and denials.
    let status = shop.status();
    let kinds: Vec<(Value, Value, Value)> = status["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].clone(), r["kind"].clone(), r["count"].clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (json!("big_order"), json!("ephemeral"), Value::Null),
            (json!("customers"), json!("relation"), json!(2)),
            (json!("order_plan"), json!("view"), json!(2)),
            (json!("orders"), json!("relation"), json!(2)),
            (json!("orphan"), json!("denial"), Value::Null),
            (json!("plan_total"), json!("view"), json!(1)),
        ]
    );
    assert_eq!(
        shop.ok(&["verify"]),
        "verified: 2 materialized views equal their recomputation (order_plan, plan_total)\n"
    );
    assert!(shop
        .ok(&["verify", "--at", "HEAD~1"])
        .starts_with("verified: 2"));
    // A violated denial refuses the commit: exit 2, the witness, no commit.
    let head = shop.head();
    let err = shop.fails(
        &[
            "commit",
            "-m",
            "orphan",
            "+orders(4, 1, 10)",
            "+orders(99999, 77, 1)",
        ],
        2,
    );
    assert_eq!(err, "error: denial orphan violated by orphan(99999)\n");
    assert_eq!(shop.head(), head);
    // A change to a view is refused (exit 1).
    assert_one_line_error(
        &shop.fails(&["commit", "-m", "x", "+order_plan(9, \"pro\")"], 1),
        &["order_plan", "view"],
    );
    // --stats prints totals, then one line per operator.
    let out = shop.ok(&["commit", "-m", "stats", "--stats", "+orders(5, 1, 5)"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].starts_with("stats: nodes_written="), "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("stats: counting order_plan: entries_read=")),
        "{out}"
    );
}

#[test]
fn commit_stats_as_json_break_the_commit_down() {
    let shop = Shop::defined();
    shop.write("rules.rnt", SHOP_WITH_RULES);
    shop.ok(&["define", "rules.rnt"]);
    let out = shop.ok(&[
        "commit",
        "-m",
        "breakdown",
        "--stats",
        "--format",
        "json",
        "+customers(9, \"pro\")",
        "+orders(90, 9, 30)",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(json["state"].as_str(), Some(shop.state().as_str()), "{out}");
    assert_eq!(json["changes"]["orders"]["inserted"], 1, "{out}");
    let written = json["work"]["nodes_written"].as_u64().unwrap();
    assert!(written > 0, "{out}");
    // Every new node is hashed once, and every new chunk goes through the pack writer
    // and is made durable with at least one fsync.
    let storage = &json["storage"];
    assert!(
        storage["hash"]["count"].as_u64().unwrap() >= written,
        "{out}"
    );
    assert!(
        storage["compress"]["count"].as_u64().unwrap() >= written,
        "{out}"
    );
    assert!(storage["fsync"]["count"].as_u64().unwrap() >= 1, "{out}");
    let operators = json["operators"].as_array().unwrap();
    let names: Vec<&str> = operators
        .iter()
        .map(|o| o["operator"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["base", "counting", "aggregate", "denial"], "{out}");
    // The steps fit in the command's time.
    let timings = &json["timings_us"];
    let steps: u64 = ["open", "parse", "base", "maintain", "write", "publish"]
        .iter()
        .map(|step| timings[step].as_u64().unwrap())
        .sum();
    assert!(steps <= timings["command"].as_u64().unwrap(), "{out}");
    // Without --stats, JSON output names the commit only.
    let out = shop.ok(&[
        "commit",
        "-m",
        "plain",
        "--format",
        "json",
        "+orders(91, 9, 5)",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["state"].as_str(), Some(shop.state().as_str()), "{out}");
    assert!(json.get("storage").is_none(), "{out}");
}

#[test]
fn a_program_its_data_violates_is_refused() {
    let shop = Shop::defined();
    shop.commit("orphan", &["+orders(1, 5, 10)"]);
    shop.write("rules.rnt", SHOP_WITH_RULES);
    let head = shop.head();
    let err = shop.fails(&["define", "rules.rnt"], 2);
    assert_eq!(err, "error: denial orphan violated by orphan(1)\n");
    assert_eq!(shop.head(), head);
}

#[test]
fn queries_evaluate_ad_hoc_rules_and_verify_without_views() {
    let shop = Shop::defined();
    shop.commit(
        "two",
        &[
            "+customers(7, \"pro\")",
            "+orders(1, 7, 30)",
            "+orders(2, 7, 950)",
        ],
    );
    assert_eq!(
        shop.ok(&[
            "query",
            "q(i, a) :- orders(i, _, a), a > 100.",
            "--format",
            "csv"
        ]),
        "i,a\n2,950\n"
    );
    assert_eq!(
        shop.ok(&[
            "query",
            "t(c, sum(a)) :- orders(_, c, a).",
            "--format",
            "json"
        ]),
        "[\n  [7, 980]\n]\n"
    );
    assert_eq!(
        shop.ok(&[
            "query",
            "q(i) :- orders(i, _, _).",
            "--at",
            "HEAD~1",
            "--format",
            "csv"
        ]),
        "i\n"
    );
    let err = shop.fails(&["query", "q(x) :- nosuch(x)."], 1);
    assert!(err.contains("unknown relation"), "{err}");
    assert_eq!(
        shop.ok(&["verify"]),
        "verified: no materialized views to check\n"
    );
    assert_eq!(
        shop.ok(&["verify", "--at", "HEAD"]),
        "verified: no materialized views to check\n"
    );
    assert_one_line_error(
        &shop.fails(&["verify", "--at", "nope"], 1),
        &["unknown reference `nope`"],
    );
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let shop = Shop::init();
    assert_one_line_error(&shop.fails(&["frobnicate"], 1), &["frobnicate"]);
    assert_one_line_error(&shop.fails(&["log", "--format", "csv"], 1), &["csv"]);
    assert_one_line_error(&shop.fails(&["diff", "HEAD"], 1), &[]);
    assert_one_line_error(
        &shop.fails(&["diff", "HEAD", "HEAD", "orders", "--all"], 1),
        &["--all"],
    );
    assert!(shop.ok(&["--help"]).contains("Usage: rnt"));
    assert!(shop.ok(&["commit", "--help"]).contains("--message <MSG>"));
    assert!(shop.ok(&["--version"]).starts_with("rnt "));
    assert_eq!(shop.run(&[]).code, 1);
}

#[test]
fn demo_runs_and_cleans_up() {
    let shop = Shop::bare();
    let run = shop
        .command(&["demo"])
        .env("TMPDIR", shop.dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for step in [
        "$ rnt init",
        "$ rnt define shop.rnt",
        "$ rnt log",
        "$ rnt show orders --at HEAD~1",
        "$ rnt diff HEAD~1 HEAD",
        "$ rnt status",
    ] {
        assert!(stdout.contains(step), "missing {step:?} in\n{stdout}");
    }
    assert!(stdout.contains("+orders(2, 2, 275)"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(shop.dir()).unwrap().collect();
    assert!(left.is_empty(), "the demo left {left:?}");
    let run = shop
        .command(&["demo", "--keep"])
        .env("TMPDIR", shop.dir())
        .output()
        .unwrap();
    assert!(run.status.success());
    let kept: Vec<_> = std::fs::read_dir(shop.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1);
    let store = kept[0].join(".rnt");
    let out = shop.ok(&[
        "--store",
        store.to_str().unwrap(),
        "log",
        "--format",
        "json",
    ]);
    assert_eq!(serde_json::from_str::<Vec<Value>>(&out).unwrap().len(), 3);
}

#[test]
fn help_lists_the_column_types() {
    let shop = Shop::bare();
    let help = shop.ok(&["--help"]);
    for ty in [
        "int ",
        "str ",
        "bool ",
        "decimal(p, s) ",
        "date ",
        "timestamp ",
        "T? ",
    ] {
        assert!(help.contains(&format!("\n  {ty}")), "{ty:?} in {help}");
    }
}
