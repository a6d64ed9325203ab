//! End to end: windows in `query` and pages of `show` (issue 26, item 6) — a query may hold
//! a window literal (its head is evaluated once, never stored), `partition` may be an empty
//! list before `order` (one partition), in every output format; `show REL --order COL[,COL]
//! [--desc] --limit N --offset N` orders by columns (nulls last either way) and takes a
//! page, in every format; bad columns and counts are errors, writing nothing.

mod common;

use common::{assert_one_line_error, Shop};

const PROGRAM: &str = "\
relation orders(id: int, customer: int, amount: int?).
view ranked(id: int, k: int).
ranked(i, k) :- orders(i, _, a), a is not null, k = rank() over (partition order a desc).
";

fn shop() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit(
        "orders",
        &[
            "+orders(1, 7, 30)",
            "+orders(2, 7, 120)",
            "+orders(3, 8, 15)",
            "+orders(4, 9, 940)",
            "+orders(5, 7, null)",
        ],
    );
    shop
}

#[test]
fn a_query_may_hold_a_window() {
    let shop = shop();
    let top = "q(i, k) :- orders(i, c, a), a is not null, k = rank() over (partition order a desc), k <= 2.";
    assert_eq!(shop.ok(&["query", top]), "i  k\n2  2\n4  1\n(2 tuples)\n");
    assert_eq!(
        shop.ok(&["query", top, "--format", "csv"]),
        "i,k\n2,2\n4,1\n"
    );
    assert_eq!(
        shop.ok(&["query", top, "--format", "json"]),
        "[\n  [2, 2],\n  [4, 1]\n]\n"
    );
    assert_eq!(
        shop.ok(&["query", top, "--format", "changes"]),
        "+q(i: 2, k: 2)\n+q(i: 4, k: 1)\n"
    );
    // Partitioned, a running sum, lag with and without a default, and a query reading it.
    let per_customer =
        "q(c, i, t) :- orders(i, c, a), a is not null, t = sum(a) over (partition c order i).";
    assert_eq!(
        shop.ok(&["query", per_customer, "--format", "csv"]),
        "c,i,t\n7,1,30\n7,2,150\n8,3,15\n9,4,940\n"
    );
    let lag = "q(i, p) :- orders(i, _, a), p = lag(a, 1) over (order i).";
    assert_eq!(
        shop.ok(&["query", lag, "--format", "json"]),
        "[\n  [1, null],\n  [2, 30],\n  [3, 120],\n  [4, 15],\n  [5, 940]\n]\n"
    );
    let reading =
        "first(i) :- q(i, 1). q(i, k) :- orders(i, _, _), k = row_number() over (order i desc).";
    assert_eq!(shop.ok(&["query", reading, "--format", "csv"]), "i\n5\n");
    // The empty partition list, in a view too.
    assert_eq!(
        shop.ok(&["show", "ranked", "--format", "csv"]),
        "id,k\n1,3\n2,2\n3,4\n4,1\n"
    );
    // Old states answer too.
    assert_eq!(
        shop.ok(&["query", top, "--at", "HEAD~1", "--format", "csv"]),
        "i,k\n"
    );
}

#[test]
fn a_query_window_is_checked_as_a_views() {
    let shop = shop();
    let head = shop.head();
    let stderr = shop.fails(
        &[
            "query",
            "q(i, k) :- orders(i, c, _), orders(c, _, _), k = rank() over (order i).",
        ],
        1,
    );
    assert!(
        stderr.contains("reads exactly one positive atom"),
        "{stderr}"
    );
    assert!(stderr.contains("help: join first"), "{stderr}");
    let stderr = shop.fails(
        &[
            "query",
            "q(i, k) :- orders(i, c, _), k = rank() over (partition z order i).",
        ],
        1,
    );
    assert!(stderr.contains("`z`"), "{stderr}");
    let stderr = shop.fails(
        &[
            "query",
            "q(i, k) :- orders(i, c, _), k = rank() over (order i",
        ],
        1,
    );
    assert!(stderr.contains("query:1:"), "{stderr}");
    assert_eq!(shop.head(), head);
}

#[test]
fn show_orders_by_columns_and_takes_a_page() {
    let shop = shop();
    assert_eq!(
        shop.ok(&["show", "orders", "--order", "amount", "--desc", "--limit", "3"]),
        "id  customer  amount\n 4         9     940\n 2         7     120\n 1         7      30\n(3 tuples)\n"
    );
    // Nulls last ascending too; ties in key order; an offset.
    assert_eq!(
        shop.ok(&["show", "orders", "--order", "amount", "--format", "csv"]),
        "id,customer,amount\n3,8,15\n1,7,30\n2,7,120\n4,9,940\n5,7,\n"
    );
    assert_eq!(
        shop.ok(&[
            "show",
            "orders",
            "--order",
            "customer,amount",
            "--offset",
            "1",
            "--limit",
            "2",
            "--format",
            "json"
        ]),
        "[\n  [2, 7, 120],\n  [5, 7, null]\n]\n"
    );
    assert_eq!(
        shop.ok(&[
            "show", "orders", "--order", "customer", "--desc", "--format", "changes", "--limit",
            "2"
        ]),
        "+orders(id: 4, customer: 9, amount: 940)\n+orders(id: 3, customer: 8, amount: 15)\n"
    );
    // Key order: a page, or the last tuples first.
    assert_eq!(
        shop.ok(&["show", "orders", "--offset", "3", "--format", "csv"]),
        "id,customer,amount\n4,9,940\n5,7,\n"
    );
    assert_eq!(
        shop.ok(&["show", "orders", "--desc", "--limit", "1", "--format", "csv"]),
        "id,customer,amount\n5,7,\n"
    );
    assert_eq!(
        shop.ok(&["show", "orders", "--offset", "9"]),
        "id  customer  amount\n(0 tuples)\n"
    );
    assert_eq!(
        shop.ok(&["show", "ranked", "--order", "k", "--limit", "2", "--format", "csv"]),
        "id,k\n4,1\n2,2\n"
    );
    assert_eq!(
        shop.ok(&["show", "ranked", "--order", "k", "--at", "HEAD~1", "--format", "csv"]),
        "id,k\n"
    );
}

#[test]
fn show_refuses_a_column_it_lacks_and_a_bad_count() {
    let shop = shop();
    let stderr = shop.fails(&["show", "orders", "--order", "amount,nosuch"], 1);
    assert_one_line_error(
        &stderr,
        &[
            "`nosuch` is not a column of `orders`",
            "id, customer, amount",
        ],
    );
    for args in [
        &["show", "orders", "--limit", "-1"][..],
        &["show", "orders", "--offset", "x"],
        &["show", "orders", "--limit"],
    ] {
        let stderr = shop.fails(args, 1);
        assert_one_line_error(&stderr, &[]);
    }
}
