//! End to end: `--witnesses N` (issue 26, item 5) on commit, import, define and merge — a
//! refusal lists up to N witnesses of each violated denial, the default names one and
//! adds "(and more: --witnesses N)" when more exist; exit 2, nothing written.

mod common;

use common::{assert_one_line_error, Shop};

const PROGRAM: &str = "\
relation customers(id: int, plan: str).
relation orders(id: int, customer: int, amount: int).
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
denial huge(id: int).
huge(i) :- orders(i, _, a), a > 5000.
";

fn shop() -> Shop {
    let shop = Shop::init();
    shop.write("p.rnt", PROGRAM);
    shop.ok(&["define", "p.rnt"]);
    shop.commit("customers", &["+customers(7, \"pro\")"]);
    shop
}

const THREE_ORPHANS: [&str; 3] = [
    "+orders(1, 90, 5)",
    "+orders(2, 91, 5)",
    "+orders(3, 92, 5)",
];

#[test]
fn a_commit_names_one_witness_and_says_when_there_are_more() {
    let shop = shop();
    let head = shop.head();
    let mut args = vec!["commit", "-m", "bad"];
    args.extend(THREE_ORPHANS);
    let stderr = shop.fails(&args, 2);
    assert_eq!(
        stderr,
        "error: denial orphan violated by orphan(1) (and more: --witnesses N)\n"
    );
    args.extend(["--witnesses", "2"]);
    let stderr = shop.fails(&args, 2);
    assert_eq!(
        stderr,
        "error: denial orphan violated by orphan(1), orphan(2) (and more: --witnesses N)\n"
    );
    let mut all = args.clone();
    all.pop();
    all.push("3");
    assert_eq!(
        shop.fails(&all, 2),
        "error: denial orphan violated by orphan(1), orphan(2), orphan(3)\n"
    );
    // One witness alone: the line as it always was.
    assert_eq!(
        shop.fails(&["commit", "-m", "bad", "+orders(1, 90, 5)"], 2),
        "error: denial orphan violated by orphan(1)\n"
    );
    // Each violated denial, in name order.
    let stderr = shop.fails(
        &[
            "commit",
            "-m",
            "bad",
            "+orders(1, 90, 6000)",
            "--witnesses",
            "5",
        ],
        2,
    );
    assert_eq!(
        stderr,
        "error: denial huge violated by huge(1); denial orphan violated by orphan(1)\n"
    );
    assert_eq!(shop.head(), head);
}

#[test]
fn import_define_and_merge_list_witnesses_too() {
    let shop = shop();
    let head = shop.head();
    shop.write("orders.csv", "id,customer,amount\n1,90,5\n2,91,5\n3,7,5\n");
    let stderr = shop.fails(&["import", "orders", "orders.csv"], 2);
    assert_one_line_error(
        &stderr,
        &["orphan(1) (from orders.csv, line 2) (and more: --witnesses N)"],
    );
    let stderr = shop.fails(&["import", "orders", "orders.csv", "--witnesses", "4"], 2);
    assert_one_line_error(
        &stderr,
        &["violated by orphan(1) (from orders.csv, line 2), orphan(2)"],
    );
    assert!(!stderr.contains("and more"), "{stderr}");
    assert_eq!(shop.head(), head);
    // A define whose new denial the data violates.
    shop.commit(
        "orders",
        &[
            "+orders(1, 7, 10)",
            "+orders(2, 7, 20)",
            "+orders(3, 7, 30)",
        ],
    );
    let head = shop.head();
    shop.write(
        "q.rnt",
        &format!("{PROGRAM}denial small(id: int).\nsmall(i) :- orders(i, _, a), a < 25.\n"),
    );
    let stderr = shop.fails(&["define", "q.rnt"], 2);
    assert_one_line_error(
        &stderr,
        &["denial small violated by small(1) (and more: --witnesses N)"],
    );
    let stderr = shop.fails(&["define", "q.rnt", "--witnesses", "9"], 2);
    assert_one_line_error(&stderr, &["denial small violated by small(1), small(2)"]);
    assert!(!stderr.contains("and more"), "{stderr}");
    assert_eq!(shop.head(), head);
    // A merge whose merged contents a denial refuses: main's orders of a customer the
    // other branch deleted.
    shop.commit("customer 8", &["+customers(8, \"free\")"]);
    shop.ok(&["branch", "side"]);
    shop.commit("orders of 8", &["+orders(4, 8, 1)", "+orders(5, 8, 2)"]);
    shop.ok(&["switch", "side"]);
    shop.commit("drop 8", &["-customers(8, \"free\")"]);
    shop.ok(&["switch", "main"]);
    let head = shop.head();
    let stderr = shop.fails(&["merge", "side"], 2);
    assert_one_line_error(&stderr, &["orphan(4) (and more: --witnesses N)"]);
    let stderr = shop.fails(&["merge", "side", "--witnesses", "10"], 2);
    assert_one_line_error(&stderr, &["violated by orphan(4), orphan(5)"]);
    assert!(!stderr.contains("and more"), "{stderr}");
    assert_eq!(shop.head(), head);
}

#[test]
fn a_count_below_one_is_a_usage_error() {
    let shop = shop();
    for args in [
        &["commit", "-m", "x", "+orders(1, 7, 5)", "--witnesses", "0"][..],
        &[
            "commit",
            "-m",
            "x",
            "+orders(1, 7, 5)",
            "--witnesses",
            "many",
        ],
        &["define", "p.rnt", "--witnesses", "0"],
    ] {
        let stderr = shop.fails(args, 1);
        assert_one_line_error(&stderr, &["--witnesses"]);
    }
}
