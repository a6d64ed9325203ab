//! Guards the rough edges a new user hit (issue 9, item 5), each as it was met from the
//! command line: an empty commit message is refused as git refuses it; `demo --store` is
//! refused, not ignored; clap's "a similar subcommand exists" tip survives the one-line
//! error; `define` names its commit the way `log` does; and a query's unsafe variable or
//! unknown relation is reported with a span, as `define` reports them.

mod common;

use common::{assert_one_line_error, Shop};

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
