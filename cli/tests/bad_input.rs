//! Guards how bad input is refused: exit code 1, one line on stderr that names the place
//! (file, line, column) and what is wrong, and no commit — the log and HEAD are unchanged,
//! even when the bad change comes after good ones.

mod common;

use common::{assert_one_line_error, Shop, SHOP};
use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database};
use rnt_store::MemoryStore;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

/// A store with the shop program, two customers and one order.
fn shop() -> Shop {
    let shop = Shop::defined();
    shop.commit(
        "seed",
        &[
            "+customers(1, \"free\")",
            "+customers(2, \"pro\")",
            "+orders(1, 1, 10)",
        ],
    );
    shop
}

/// Runs `args`, expects exit 1 with one error line holding `needles`, and checks that
/// nothing was committed.
fn refused(shop: &Shop, args: &[&str], needles: &[&str]) {
    let head = shop.head();
    let log = shop.log().len();
    let err = shop.fails(args, 1);
    assert_one_line_error(&err, needles);
    assert_eq!(shop.head(), head, "rnt {args:?} moved HEAD");
    assert_eq!(shop.log().len(), log, "rnt {args:?} added a commit");
}

#[test]
fn a_value_of_the_wrong_type() {
    let shop = shop();
    refused(
        &shop,
        &[
            "commit",
            "-m",
            "x",
            "+orders(2, 1, 5)",
            "+orders(3, \"two\", 5)",
        ],
        &[
            "argument 2, line 1",
            "value 2 of orders (customer) must be int, found \"two\"",
        ],
    );
    refused(
        &shop,
        &["commit", "-m", "x", "+customers(3, 4)"],
        &["argument 1", "(plan) must be str, found 4"],
    );
    refused(
        &shop,
        &["commit", "-m", "x", "+customers(3, true)"],
        &["must be str, found true"],
    );
}

#[test]
fn wrong_arity() {
    let shop = shop();
    refused(
        &shop,
        &["commit", "-m", "x", "+orders(2, 1)"],
        &["argument 1, line 1", "orders takes 3 values, found 2"],
    );
    refused(
        &shop,
        &["commit", "-m", "x", "-customers(1, \"free\", 3)"],
        &["customers takes 2 values, found 3"],
    );
}

#[test]
fn an_unknown_relation() {
    let shop = shop();
    shop.write("changes.txt", "+orders(2, 1, 5)\n\n+order(3, 1, 5)\n");
    refused(
        &shop,
        &["commit", "-m", "x", "-f", "changes.txt"],
        &["changes.txt, line 3", "unknown relation `order`"],
    );
    refused(&shop, &["import", "nope", "x.csv"], &["cannot read x.csv"]);
    shop.write("x.csv", "a\n1\n");
    refused(
        &shop,
        &["import", "nope", "x.csv"],
        &["unknown relation `nope`", "customers, orders"],
    );
}

#[test]
fn malformed_lines() {
    let shop = shop();
    let cases: &[(&str, &[&str])] = &[
        (
            "+orders(2, 1, 5)\n# ok so far\n+orders(3 1 5)\n",
            &[
                "changes.txt, line 3, column 11",
                "expected `,` or `)` after value, found `1`",
            ],
        ),
        (
            "orders(2, 1, 5)\n",
            &["line 1, column 1", "expected `+`, `-` or `~`"],
        ),
        (
            "+orders(2, 1, 5\n",
            &["line 1, column 16", "found end of line"],
        ),
        (
            "+orders(2, 1, 5) junk\n",
            &["line 1, column 18", "expected end of line"],
        ),
        (
            "+customers(3, \"open)\n",
            &["line 1, column 15", "string is not closed"],
        ),
        ("+customers(3, \"bad \\q\")\n", &["line 1, column 15"]),
        (
            "+customers(3, plan)\n",
            &["line 1, column 15", "expected a value"],
        ),
    ];
    for (text, needles) in cases {
        shop.write("changes.txt", text);
        refused(&shop, &["commit", "-m", "x", "-f", "changes.txt"], needles);
    }
    refused(
        &shop,
        &["commit", "-m", "x", "+orders(1, 2, 3) +orders(4, 5, 6)"],
        &["argument 1, line 1", "expected end of line"],
    );
    refused(
        &shop,
        &["commit", "-m", "x", "+orders(1, 2, 3)\n+orders(4, 5, 6)"],
        &["argument 1, line 2", "expected one change"],
    );
    std::fs::write(
        shop.dir().join("binary.txt"),
        b"+orders(2, 1, 5)\n+customers(3, \"\xff\")\n",
    )
    .unwrap();
    refused(
        &shop,
        &["commit", "-m", "x", "-f", "binary.txt"],
        &["binary.txt, line 2", "not valid UTF-8"],
    );
    refused(
        &shop,
        &["commit", "-m", "x", "-f", "missing.txt"],
        &["cannot read missing.txt"],
    );
}

#[test]
fn an_int_out_of_range() {
    let shop = shop();
    refused(
        &shop,
        &["commit", "-m", "x", "+orders(9223372036854775808, 1, 1)"],
        &[
            "argument 1, line 1, column 9",
            "integer 9223372036854775808 is out of range for int",
        ],
    );
    // The extremes themselves are fine.
    shop.commit(
        "extremes",
        &["+orders(9223372036854775807, -9223372036854775808, 0)"],
    );
    assert_eq!(
        shop.rows("orders", None)[1],
        vec![
            json!(9223372036854775807i64),
            json!(-9223372036854775808i64),
            json!(0)
        ]
    );
}

#[test]
fn a_tuple_named_twice() {
    let shop = shop();
    shop.write(
        "changes.txt",
        "+orders(2, 1, 5)\n-orders(1, 1, 10)\n+orders(2, 1, 5)\n",
    );
    refused(
        &shop,
        &["commit", "-m", "x", "-f", "changes.txt"],
        &[
            "changes.txt, line 3",
            "orders(2, 1, 5) is already changed on line 1",
        ],
    );
    // Insert and delete of one tuple in one change set is also naming it twice.
    shop.write("update.txt", "+orders(2, 1, 5)\n-orders(1, 1, 10)\n");
    refused(
        &shop,
        &["commit", "-m", "x", "-f", "update.txt", "+orders(1, 1, 10)"],
        &[
            "argument 1, line 1",
            "orders(1, 1, 10) is already changed in update.txt, line 2",
        ],
    );
}

#[test]
fn a_change_to_a_view() {
    let shop = Shop::init();
    shop.write("v.rnt", &format!("{SHOP}view big(id: int).\n"));
    shop.ok(&["define", "v.rnt"]);
    refused(
        &shop,
        &["commit", "-m", "x", "+orders(1, 1, 1)", "+big(1)"],
        &["line 1", "`big` is a view"],
    );
    shop.write("big.csv", "id\n1\n");
    refused(&shop, &["import", "big", "big.csv"], &["`big` is a view"]);
}

#[test]
fn csv_rows_that_do_not_match_the_schema() {
    let shop = shop();
    let cases: &[(&str, &[&str])] = &[
        (
            "id,customer,amount\n2,1,5\n3,1,x\n",
            &[
                "orders.csv, line 3, column amount",
                "expected an int, found `x`",
            ],
        ),
        (
            "id,customer,amount\n2,1,5\n3,1\n",
            &["orders.csv, line 3", "expected 3 fields, found 2"],
        ),
        (
            "id,customer\n2,1\n",
            &["orders.csv, line 1", "no column `amount`"],
        ),
        (
            "id,customer,amount,extra\n",
            &["orders.csv, line 1", "unknown column `extra`"],
        ),
        (
            "id,customer,amount\n2,1,99999999999999999999\n",
            &["line 2, column amount", "out of range"],
        ),
        (
            "id,customer,amount\n2,1,\"5\n",
            &["orders.csv, line 2", "not closed"],
        ),
        ("", &["orders.csv, line 1", "expected a header row"]),
    ];
    for (text, needles) in cases {
        shop.write("orders.csv", text);
        refused(&shop, &["import", "orders", "orders.csv"], needles);
    }
    assert_eq!(
        shop.rows("orders", None),
        vec![vec![json!(1), json!(1), json!(10)]]
    );
}

#[test]
fn unknown_references() {
    let shop = shop();
    refused(
        &shop,
        &["show", "orders", "--at", "nobranch"],
        &["unknown reference `nobranch`"],
    );
    refused(
        &shop,
        &["show", "orders", "--at", "deadbeef"],
        &["unknown reference `deadbeef`", "no commit or state"],
    );
    refused(
        &shop,
        &["show", "orders", "--at", "abc"],
        &["`abc`", "4 to 64 hex digits"],
    );
    refused(
        &shop,
        &["show", "orders", "--at", "HEAD~5"],
        &["HEAD~5", "the history has only 1 commit(s) before `HEAD`"],
    );
    refused(
        &shop,
        &["show", "orders", "--at", "HEAD~x"],
        &["HEAD~x", "number of steps"],
    );
    refused(&shop, &["diff", "HEAD", "HEAD~9"], &["HEAD~9"]);
    let empty = Shop::init();
    refused(
        &empty,
        &["show", "orders", "--at", "HEAD"],
        &["no commits yet"],
    );
    refused(
        &empty,
        &["show", "orders"],
        &["unknown relation `orders`", "rnt define"],
    );
}

/// Finds two base contents of the shop whose state hashes share their first four hex
/// digits (in memory: state hashes do not depend on the store or the history), commits
/// both in a real store, and checks that the shared prefix is refused as ambiguous.
#[test]
fn an_ambiguous_reference() {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(SHOP, "shop.rnt", "define").unwrap();
    let mut seen: HashMap<String, i64> = HashMap::new();
    let (first, second, prefix) = (0..100_000i64)
        .find_map(|i| {
            let mut text = format!("+customers({i}, \"p\")\n");
            if i > 0 {
                text += &format!("-customers({}, \"p\")\n", i - 1);
            }
            let outcome = db
                .commit(parse_changes(&text, None).unwrap(), "step", None)
                .unwrap();
            let CommitOutcome::Committed { state, .. } = outcome else {
                panic!("{outcome:?}")
            };
            let prefix = state.short_hex(4);
            seen.insert(prefix.clone(), i)
                .map(|earlier| (earlier, i, prefix))
        })
        .expect("a 4-digit collision among 100000 states");

    let shop = Shop::defined();
    shop.commit("first", &[&format!("+customers({first}, \"p\")")]);
    shop.commit(
        "second",
        &[
            &format!("-customers({first}, \"p\")"),
            &format!("+customers({second}, \"p\")"),
        ],
    );
    let log = shop.log();
    assert!(log[0]["state"].as_str().unwrap().starts_with(&prefix));
    assert!(log[1]["state"].as_str().unwrap().starts_with(&prefix));
    refused(
        &shop,
        &["show", "customers", "--at", &prefix],
        &[
            &format!("ambiguous reference `{prefix}`"),
            "use more digits",
        ],
    );
    // Longer prefixes tell them apart.
    let longer = &log[1]["state"].as_str().unwrap()[..16];
    assert_eq!(
        shop.rows("customers", Some(longer)),
        vec![vec![json!(first), json!("p")]]
    );
}
