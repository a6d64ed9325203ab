//! The SQL compiler's helper relations (names starting with `_`) are its business: no
//! listing names them — `status`, `diff`, `log`, `program`, `why`, `verify`, the unknown
//! relation error, the web view and the HTTP API — unless `--internal` (`?internal=1`) asks
//! for them, naming one still reads it, and a user's `rnt define` or `rnt alter` cannot
//! take such a name while a program read back with `--internal` still defines.

mod common;

use common::http::get;
use common::Shop;

/// Tables and views whose compiled rules need helpers: a HAVING (an aggregate's helper) and
/// a LEFT JOIN; the last statement, an insert, changes helpers and views alike.
const SQL: &str = "CREATE TABLE t (a INT, b INT);
CREATE MATERIALIZED VIEW v AS SELECT a, count(*) AS n FROM t GROUP BY a HAVING count(*) > 1;
CREATE MATERIALIZED VIEW lj AS SELECT t.a, u.b FROM t LEFT JOIN t AS u ON t.a = u.b;
INSERT INTO t VALUES (1, 2), (1, 3), (2, 4)";

/// A store holding [`SQL`]'s relations and rows.
fn sql_store(shop: &Shop) {
    shop.ok(&["sql", SQL]);
}

/// The helper relations of the head's state, as `status --internal` lists them.
fn helpers(shop: &Shop) -> Vec<String> {
    let status: serde_json::Value =
        serde_json::from_str(&shop.ok(&["status", "--internal", "--format", "json"]))
            .expect("status prints JSON");
    let names: Vec<String> = status["relations"]
        .as_array()
        .expect("relations")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .filter(|name| name.starts_with('_'))
        .map(str::to_string)
        .collect();
    assert!(!names.is_empty(), "the views need helpers: {status}");
    names
}

/// Asserts that `text` (the output of `what`) lists none of `helpers`. A rule of a user's
/// view may read a helper (it is the view's definition), so only what a line holds before
/// a rule's `:-` counts; a JSON string holding a program is read line by line too.
fn names_none(what: &str, text: &str, helpers: &[String]) {
    let text = text.replace("\\n", "\n");
    for line in text.lines() {
        let listed = line.split(" :- ").next().unwrap_or_default();
        for helper in helpers {
            assert!(
                !listed.contains(helper.as_str()),
                "{what} names the helper {helper}:\n{text}"
            );
        }
    }
}

/// Asserts that `text` (the output of `what`) names some helper of `helpers`.
fn names_some(what: &str, text: &str, helpers: &[String]) {
    assert!(
        helpers.iter().any(|h| text.contains(h.as_str())),
        "{what} names no helper ({helpers:?}):\n{text}"
    );
}

#[test]
fn every_listing_hides_the_helpers_unless_asked() {
    let shop = Shop::init();
    sql_store(&shop);
    let helpers = helpers(&shop);
    let listings: [&[&str]; 14] = [
        &["status"],
        &["status", "--format", "json"],
        &["diff", "--all", "HEAD"],
        &["diff", "--all", "HEAD", "--format", "json"],
        &["diff", "--program", "HEAD~3", "HEAD"],
        &["log", "--views"],
        &["log", "--views", "--format", "json"],
        &["log", "--graph", "--views"],
        &["program"],
        &["program", "--format", "json"],
        &["verify"],
        &["why", "v(1, 2)"],
        &["why", "v(1, 2)", "--format", "json"],
        &["why", "lj(1, null, 2)"],
    ];
    for args in listings {
        let run = shop.run(args);
        assert_eq!(run.code, 0, "rnt {args:?}: {}", run.stderr);
        names_none(&format!("rnt {args:?}"), &run.stdout, &helpers);
        names_none(&format!("rnt {args:?} (stderr)"), &run.stderr, &helpers);
        let mut all = args.to_vec();
        all.push("--internal");
        let shown = shop.ok(&all);
        // `why` shows a helper when the view's rules read one (the compiler decides).
        let view = args
            .get(1)
            .and_then(|a| a.split('(').next())
            .unwrap_or_default();
        if args[0] != "why" || helpers.iter().any(|h| h.starts_with(&format!("_{view}_"))) {
            names_some(&format!("rnt {all:?}"), &shown, &helpers);
        }
    }
    // What is left says what it left out, and what is shown is still right.
    let program = shop.ok(&["program"]);
    let first = program.lines().next().unwrap_or_default();
    assert!(
        first.starts_with('#')
            && first.contains("internal relation")
            && first.contains("--internal"),
        "{program}"
    );
    assert!(program.contains("view v(a: int?, n: int?)."), "{program}");
    let verified = shop.ok(&["verify"]);
    assert!(
        verified.contains("lj, v, and") && verified.contains("of the SQL compiler's helpers"),
        "{verified}"
    );
    let why = shop.ok(&["why", "v(1, 2)"]);
    if helpers.iter().any(|h| h.starts_with("_v_")) {
        assert!(
            why.contains("by the definition of v  with a = 1, n = 2"),
            "{why}"
        );
    }
    assert!(
        why.contains("t(1, 2, 1)") && why.contains("t(1, 3, 1)"),
        "{why}"
    );
    let status = shop.ok(&["status"]);
    for name in ["lj ", "t ", "v "] {
        assert!(status.contains(&format!("\n{name}")), "{status}");
    }
}

#[test]
fn a_helper_named_is_shown() {
    let shop = Shop::init();
    sql_store(&shop);
    let helpers = helpers(&shop);
    let helper = helpers[0].as_str();
    // show, diff REL, log --relation and why read a helper by its name.
    assert!(shop.ok(&["show", helper]).contains("tuple"));
    let diff = shop.ok(&["diff", "HEAD", helper]);
    assert!(diff.contains(&format!("+{helper}(")), "{diff}");
    let log = shop.ok(&["log", "--relation", helper]);
    assert!(log.contains("INSERT"), "{log}");
    let rows = shop.rows(helper, None);
    let tuple: Vec<String> = rows[0].iter().map(|v| v.to_string()).collect();
    let why = shop.ok(&["why", &format!("{helper}({})", tuple.join(", "))]);
    assert!(why.starts_with(&format!("{helper}(")), "{why}");
    // An unknown relation's error lists the helpers only for a name that looks like one.
    let error = shop.fails(&["show", "nope"], 1);
    assert!(error.contains("(relations: lj, t, v)"), "{error}");
    names_none("the unknown relation error", &error, &helpers);
    names_some(
        "the unknown helper error",
        &shop.fails(&["show", "_nope"], 1),
        &helpers,
    );
}

#[test]
fn a_diff_of_helpers_only_prints_nothing_and_says_why() {
    let shop = Shop::init();
    sql_store(&shop);
    // A plain view with a window keeps its query in a materialized helper: the commit
    // changes that helper's tuples and nothing a user declared.
    shop.ok(&[
        "sql",
        "CREATE VIEW w AS SELECT a, b, row_number() OVER (PARTITION BY a ORDER BY b) AS rn FROM t",
    ]);
    let run = shop.run(&["diff", "--all", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("note: only the SQL compiler's helper relations changed")
            && run.stderr.contains("--internal"),
        "{}",
        run.stderr
    );
    let all = shop.ok(&["diff", "--all", "HEAD", "--internal"]);
    assert!(all.lines().all(|line| line.starts_with("+_")), "{all}");
    assert!(!all.is_empty());
    // The log says the commit changed no view a user made.
    let log = shop.ok(&["log", "--views", "-n", "1"]);
    assert!(log.contains("CREATE VIEW w"), "{log}");
    names_none("log --views", &log, &helpers(&shop));
    // why on the view's row: base rows, the view's columns, no helper.
    let why = shop.ok(&["why", "w(1, 3, 2, 1)"]);
    assert!(
        why.contains("by the definition of w  with a = 1, b = 3, rn = 2"),
        "{why}"
    );
    assert!(why.contains("t(1, 3, 1)"), "{why}");
    names_none("why on a window view", &why, &helpers(&shop));
    let json = shop.ok(&["why", "w(1, 3, 2, 1)", "--format", "json"]);
    names_none("why on a window view, JSON", &json, &helpers(&shop));
    let shown = shop.ok(&["why", "w(1, 3, 2, 1)", "--internal"]);
    names_some("why --internal on a window view", &shown, &helpers(&shop));
}

#[test]
fn a_user_cannot_take_a_helper_name() {
    let shop = Shop::defined();
    let head = shop.head();
    shop.write(
        "taken.rnt",
        &format!(
            "{}view _x(id: int).\n_x(i) :- orders(i, _, _).\n",
            common::SHOP
        ),
    );
    let error = shop.fails(&["define", "taken.rnt"], 1);
    common::assert_one_line_error(
        &error,
        &["`_x`", "reserved", "starting with `_`", "SQL compiler"],
    );
    assert_eq!(shop.head(), head, "a refused define commits nothing");
    let error = shop.fails(&["alter", "orders", "rename-to", "_orders"], 1);
    common::assert_one_line_error(&error, &["`_orders`", "reserved"]);
    assert_eq!(shop.head(), head, "a refused alter commits nothing");
    assert!(!shop.ok(&["status", "--internal"]).contains("_x"));
}

#[test]
fn a_store_with_helpers_defines_again() {
    let shop = Shop::init();
    sql_store(&shop);
    // The whole program, helpers included, read back and defined: the helpers exist
    // already, so nothing is refused (and nothing changes).
    let program = shop.ok(&["program", "--internal"]);
    shop.write("all.rnt", &program);
    assert_eq!(
        shop.ok(&["define", "all.rnt"]),
        "nothing to commit (the program is unchanged)\n"
    );
    // A user's view added beside them commits, and SQL keeps working on the store.
    shop.write(
        "more.rnt",
        &format!("{program}\nview big(a: int?).\nbig(a) :- t(a, _, _), a > 1.\n"),
    );
    shop.ok(&["define", "more.rnt"]);
    assert_eq!(shop.rows("big", None).len(), 1);
    shop.ok(&["sql", "INSERT INTO t VALUES (1, 9)"]);
    assert_eq!(
        shop.ok(&["sql", "SELECT * FROM v", "--format", "csv"]),
        "a,n\n1,3\n"
    );
    shop.ok(&["verify"]);
}

#[test]
fn the_web_view_and_the_api_hide_the_helpers_unless_asked() {
    let shop = Shop::bare();
    shop.ok(&["init"]);
    sql_store(&shop);
    let helpers = helpers(&shop);
    let (server, address) = shop.serve(&[]);
    let _server = Stopped(server);
    let pages = [
        "/",
        "/commit/HEAD",
        "/commit/HEAD~1",
        "/diff?from=HEAD~1&to=HEAD",
        "/verify",
        "/api/status",
        "/api/log?n=2",
        "/api/program",
        "/api/diff?from=HEAD~1&to=HEAD",
    ];
    for path in pages {
        let hidden = get(&address, path);
        assert_eq!(hidden.status, 200, "{path}: {}", hidden.body);
        names_none(path, &hidden.body, &helpers);
        let join = if path.contains('?') { '&' } else { '?' };
        let asked = format!("{path}{join}internal=1");
        let shown = get(&address, &asked);
        assert_eq!(shown.status, 200, "{asked}: {}", shown.body);
        if path != "/" && path != "/api/log?n=2" {
            // The index and the log list base changes only: no helper to show.
            names_some(&asked, &shown.body, &helpers);
        }
    }
    // A page that left helpers out links to itself with them.
    let commit = get(&address, "/commit/HEAD").body;
    assert!(commit.contains("internal=1"), "{commit}");
    // A helper's own page, by name.
    let page = get(&address, &format!("/relation/{}", helpers[0]));
    assert_eq!(page.status, 200, "{}", page.body);
}

/// A server stopped when the test ends, passed or not.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
