//! Guards the rough edges a new user hit (issue 9, item 5), each as it was met from the
//! command line: an empty commit message is refused as git refuses it; `demo --store` is
//! refused, not ignored; clap's "a similar subcommand exists" tip survives the one-line
//! error; `define` names its commit the way `log` does; a query's unsafe variable or
//! unknown relation is reported with a span, as `define` reports them; and a tuple may be
//! 64 KiB, while a derived one that outgrows that is refused naming its rule and group.

mod common;

use common::{assert_one_line_error, Shop};
use serde_json::json;

#[test]
fn an_empty_commit_message_is_refused() {
    let shop = Shop::defined();
    let before = shop.log().len();
    for message in ["", "   "] {
        let stderr = shop.fails(&["commit", "-m", message, "+customers(1, \"free\")"], 1);
        assert_one_line_error(&stderr, &["empty commit message", "-m"]);
    }
    assert_eq!(shop.log().len(), before, "nothing was committed");
}

#[test]
fn demo_refuses_a_store_it_would_ignore() {
    let shop = Shop::bare();
    let store = shop.dir().join("elsewhere");
    let stderr = shop.fails(&["--store", store.to_str().unwrap(), "demo"], 1);
    assert_one_line_error(&stderr, &["demo", "--store"]);
    assert!(!store.exists(), "nothing was created at --store");
}

#[test]
fn a_mistyped_subcommand_keeps_clap_s_suggestion() {
    let shop = Shop::bare();
    let stderr = shop.fails(&["comit"], 1);
    assert_one_line_error(&stderr, &["comit", "tip:", "'commit'"]);
}

#[test]
fn define_names_its_commit_as_log_does() {
    let shop = Shop::init();
    shop.write("shop.rnt", common::SHOP);
    let stdout = shop.ok(&["define", "shop.rnt"]);
    assert!(stdout.contains("define shop.rnt"), "{stdout}");
    assert!(!stdout.contains("program updated"), "{stdout}");
    let log = shop.log();
    assert_eq!(log[0]["message"], "define shop.rnt");
}

#[test]
fn a_query_s_unsafe_variable_is_reported_with_its_span() {
    let shop = Shop::defined();
    let stderr = shop.fails(&["query", "q(x, y) :- orders(x, _, _)."], 1);
    assert!(stderr.starts_with("error: unsafe variable `y`"), "{stderr}");
    assert!(stderr.contains("--> query:1:6"), "{stderr}");
    assert!(!stderr.contains("cannot infer"), "{stderr}");
}

#[test]
fn a_query_s_unknown_relation_gets_a_span_and_a_suggestion() {
    let shop = Shop::defined();
    let stderr = shop.fails(&["query", "q(x) :- order(x, _, _)."], 1);
    assert!(
        stderr.starts_with("error: unknown relation `order`"),
        "{stderr}"
    );
    assert!(stderr.contains("--> query:1:9"), "{stderr}");
    assert!(stderr.contains("did you mean `orders`?"), "{stderr}");
}

#[test]
fn a_long_chain_of_ephemeral_relations_defines_and_commits() {
    // Evaluation recurses once per link: 3000 links overflowed the main thread's stack,
    // and a commit through them took quadratic time.
    let n = 3000;
    let mut program =
        String::from("relation base(x: int).\nephemeral e0(x: int).\ne0(x) :- base(x).\n");
    for i in 1..n {
        program.push_str(&format!(
            "ephemeral e{i}(x: int).\ne{i}(x) :- e{}(x).\n",
            i - 1
        ));
    }
    program.push_str(&format!("view top(x: int).\ntop(x) :- e{}(x).\n", n - 1));
    let shop = Shop::init();
    shop.write("chain.rnt", &program);
    shop.ok(&["define", "chain.rnt"]);
    shop.ok(&["commit", "-m", "one tuple", "+base(7)"]);
    assert_eq!(shop.rows("top", None), vec![vec![serde_json::json!(7)]]);
}

#[test]
fn tuples_up_to_64_kib_are_kept_and_a_rule_that_outgrows_the_limit_is_named() {
    let shop = Shop::init();
    let program = format!(
        "{}view order_plan(id: int, plan: str).\n\
         order_plan(i, p) :- orders(i, c, _), customers(c, p).\n\
         view plan_total(plan: str, total: int, n: int).\n\
         plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).\n",
        common::SHOP
    );
    shop.write("wide.rnt", &program);
    shop.ok(&["define", "wide.rnt"]);
    // Far over the old 4 KiB limit: stored, joined, aggregated, read back and verified.
    let wide = "w".repeat(60_000);
    shop.write(
        "wide.txt",
        &format!("+customers(1, \"{wide}\")\n+orders(10, 1, 5)\n"),
    );
    shop.ok(&["commit", "-m", "wide", "-f", "wide.txt"]);
    assert_eq!(
        shop.rows("order_plan", None),
        vec![vec![json!(10), json!(wide)]]
    );
    assert_eq!(
        shop.rows("plan_total", None),
        vec![vec![json!(wide), json!(5), json!(1)]]
    );
    assert_eq!(shop.run(&["verify"]).code, 0);

    // A plan that fits `customers` (8 + 65 522 + 2 = 65 532 bytes) but not a row of
    // `plan_total` (65 524 + 8 + 8): the order that would make the row is refused, naming
    // the rule and the group, and nothing else is blocked.
    let widest = "x".repeat(65_522);
    shop.write("widest.txt", &format!("+customers(2, \"{widest}\")\n"));
    shop.ok(&["commit", "-m", "widest plan", "-f", "widest.txt"]);
    let head = shop.head();
    let stderr = shop.fails(&["commit", "-m", "order", "+orders(11, 2, 7)"], 1);
    assert_one_line_error(
        &stderr,
        &[
            "rule `plan_total(p, sum(a), count())",
            "group (\"xxx",
            "…",
            "its row encodes to 65540 bytes, more than the limit of 65536",
        ],
    );
    assert!(stderr.len() < 400, "the group is quoted in part: {stderr}");
    assert_eq!(shop.head(), head, "nothing was committed");
    shop.ok(&["commit", "-m", "another order", "+orders(12, 1, 3)"]);

    // A define whose rule derives an oversized tuple from scratch is refused the same way.
    shop.write(
        "twice.rnt",
        &format!("{program}view twice(id: int, a: str, b: str).\ntwice(i, p, q) :- customers(i, p), customers(i, q).\n"),
    );
    let stderr = shop.fails(&["define", "twice.rnt"], 1);
    assert_one_line_error(
        &stderr,
        &[
            "rule `twice(i, p, q)",
            "derives twice(1, \"www",
            "120012 bytes",
        ],
    );
    assert_eq!(shop.log()[0]["message"], "another order");

    // A denial's witness is never stored, so no limit applies to it: a violation is still
    // exit 2, the witness quoted in part.
    shop.write(
        "pair.rnt",
        &format!("{program}denial pair(a: str, b: str).\npair(p, q) :- customers(1, p), customers(2, q).\n"),
    );
    let stderr = shop.fails(&["define", "pair.rnt"], 2);
    assert_one_line_error(&stderr, &["denial pair violated by pair(\"www", "…"]);
    assert!(
        stderr.len() < 400,
        "the witness is quoted in part: {stderr}"
    );

    // Past the limit at the door: the change names its line.
    let over = "y".repeat(65_527);
    shop.write("over.txt", &format!("+customers(3, \"{over}\")\n"));
    let stderr = shop.fails(&["commit", "-m", "over", "-f", "over.txt"], 1);
    assert_one_line_error(&stderr, &["line 1", "65537 bytes", "limit of 65536"]);
}
