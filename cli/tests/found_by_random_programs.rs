//! Guards the two wrong results that random programs checked against an independent
//! solver found (issue 28), end to end through the `rnt` binary: a window's QUALIFY bound
//! with the constant on the left (`2 <= k`) read the right way round, for all six
//! operators on both sides; and a clock step that moves only a view's derivation counts,
//! or only the values a `min` keeps, making no commit. `verify` passes after every step.

mod common;

use common::Shop;
use serde_json::{json, Value};

/// What a comparison operator says of two ints.
type Holds = fn(i64, i64) -> bool;

/// The six comparison operators and what each says of two ints.
const OPERATORS: [(&str, Holds); 6] = [
    ("=", |a, b| a == b),
    ("!=", |a, b| a != b),
    ("<", |a, b| a < b),
    ("<=", |a, b| a <= b),
    (">", |a, b| a > b),
    (">=", |a, b| a >= b),
];

fn verify(shop: &Shop) {
    shop.ok(&["verify"]);
}

/// The rows `[a, k]` of `v` for `t(1..=5)` and `k = row_number() over (order a)`, k = a,
/// kept where `holds(k)`: computed here, from the semantics, not by rnt.
fn expected(holds: impl Fn(i64) -> bool) -> Vec<Vec<Value>> {
    (1..=5)
        .filter(|&k| holds(k))
        .map(|k| vec![json!(k), json!(k)])
        .collect()
}

#[test]
fn the_issue_s_reproduction_with_the_constant_on_the_left() {
    for (bound, want) in [("2 <= k", vec![2, 3]), ("2 < k", vec![3])] {
        let shop = Shop::init();
        let program = format!(
            "relation t(a: int).\nview v(a: int, k: int).\n\
             v(a, k) :- t(a), k = row_number() over (order a), {bound}.\n"
        );
        shop.write("p.rnt", &program);
        shop.ok(&["define", "p.rnt"]);
        shop.ok(&["commit", "-m", "load", "+t(1)", "+t(2)", "+t(3)"]);
        let want: Vec<Vec<Value>> = want.iter().map(|&k| vec![json!(k), json!(k)]).collect();
        assert_eq!(shop.rows("v", None), want, "{bound}");
        verify(&shop);
    }
}

/// Every operator with the constant on either side, as a window bound: after a load, a
/// delete at the front and an insert, the view holds exactly the rows whose rank the
/// comparison admits, and `verify` agrees.
#[test]
fn every_window_bound_is_read_the_right_way_round_on_both_sides() {
    for (symbol, holds) in OPERATORS {
        for constant_left in [false, true] {
            let c = 2;
            let bound = if constant_left {
                format!("{c} {symbol} k")
            } else {
                format!("k {symbol} {c}")
            };
            let shop = Shop::init();
            let program = format!(
                "relation t(a: int).\nview v(a: int, k: int).\n\
                 v(a, k) :- t(a), k = row_number() over (order a), {bound}.\n"
            );
            shop.write("p.rnt", &program);
            shop.ok(&["define", "p.rnt"]);
            shop.ok(&["commit", "-m", "load", "+t(1)", "+t(2)", "+t(3)", "+t(4)"]);
            let admits = |k: i64| {
                if constant_left {
                    holds(c, k)
                } else {
                    holds(k, c)
                }
            };
            let rows = |n: i64| -> Vec<Vec<Value>> {
                expected(admits)
                    .into_iter()
                    .filter(|row| row[1].as_i64().is_some_and(|k| k <= n))
                    .collect()
            };
            assert_eq!(shop.rows("v", None), rows(4), "{bound} after the load");
            verify(&shop);
            // Deleting the first row moves every rank down by one: t(2) becomes rank 1.
            shop.ok(&["commit", "-m", "front", "-t(1)"]);
            let after_delete: Vec<Vec<Value>> = (1..=3)
                .filter(|&k| admits(k))
                .map(|k| vec![json!(k + 1), json!(k)])
                .collect();
            assert_eq!(shop.rows("v", None), after_delete, "{bound} after -t(1)");
            verify(&shop);
            shop.ok(&["commit", "-m", "back", "+t(1)", "+t(5)"]);
            assert_eq!(shop.rows("v", None), rows(5), "{bound} after +t(1) +t(5)");
            verify(&shop);
        }
    }
}

/// A view over a window view with a left-constant bound inherits the right answer (the
/// failing run had two more views wrong, reading such a view).
#[test]
fn a_view_over_a_window_view_with_a_left_constant_is_right() {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation t(g: int, a: int).\n\
         view ranked(g: int, a: int, k: int).\n\
         ranked(g, a, k) :- t(g, a), k = rank() over (partition g order a desc), 1 < k.\n\
         view per_group(g: int, n: int).\n\
         per_group(g, count()) :- ranked(g, _, _).\n",
    );
    shop.ok(&["define", "p.rnt"]);
    shop.ok(&[
        "commit", "-m", "load", "+t(1, 5)", "+t(1, 6)", "+t(1, 7)", "+t(2, 1)",
    ]);
    // Group 1 by amount, descending: 7 is rank 1, 6 rank 2, 5 rank 3; group 2 has rank 1 only.
    assert_eq!(
        shop.rows("ranked", None),
        vec![
            vec![json!(1), json!(5), json!(3)],
            vec![json!(1), json!(6), json!(2)],
        ]
    );
    assert_eq!(shop.rows("per_group", None), vec![vec![json!(1), json!(2)]]);
    verify(&shop);
    shop.ok(&["commit", "-m", "top", "-t(1, 7)", "+t(2, 9)"]);
    assert_eq!(
        shop.rows("ranked", None),
        vec![
            vec![json!(1), json!(5), json!(2)],
            vec![json!(2), json!(1), json!(2)],
        ]
    );
    assert_eq!(
        shop.rows("per_group", None),
        vec![vec![json!(1), json!(1)], vec![json!(2), json!(1)]]
    );
    verify(&shop);
}

/// The issue's second reproduction: a clock step that moves only `v`'s derivation count
/// (the second event enters the window, `v(1)` was there already) is "nothing to commit",
/// exit 0, and the head stays.
#[test]
fn a_clock_step_that_moves_only_derivation_counts_makes_no_commit() {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation ev(a: int, ts: int).\nview v(a: int).\nv(a) :- ev(a, ts), ts < now.\n",
    );
    shop.ok(&["define", "--clock", "2000000000", "p.rnt"]);
    shop.ok(&[
        "commit",
        "-m",
        "l",
        "--clock",
        "2000000101",
        "+ev(1, 2000000100)",
        "+ev(1, 2000000105)",
    ]);
    assert_eq!(shop.rows("v", None), vec![vec![json!(1)]]);
    let head = shop.head();
    let out = shop.ok(&["commit", "-m", "tick", "--clock", "2000000106"]);
    assert!(out.contains("nothing to commit"), "{out}");
    assert_eq!(shop.head(), head, "the head stays");
    assert_eq!(shop.rows("v", None), vec![vec![json!(1)]]);
    verify(&shop);
    // A later step that does move a row commits, from the head's clock.
    shop.ok(&[
        "commit",
        "-m",
        "gone",
        "-ev(1, 2000000100)",
        "-ev(1, 2000000105)",
    ]);
    assert_eq!(shop.rows("v", None), Vec::<Vec<Value>>::new());
    verify(&shop);
}

/// A clock step that moves only the values a `min` keeps (a larger value enters the
/// window, the minimum stays) is "nothing to commit" too; one that moves the minimum is a
/// commit.
#[test]
fn a_clock_step_that_moves_only_min_state_makes_no_commit() {
    let shop = Shop::init();
    shop.write(
        "p.rnt",
        "relation ev(a: int, ts: int).\nview lo(a: int, t: int).\n\
         lo(a, min(ts)) :- ev(a, ts), ts < now.\n",
    );
    shop.ok(&["define", "--clock", "2000000000", "p.rnt"]);
    shop.ok(&[
        "commit",
        "-m",
        "l",
        "--clock",
        "2000000101",
        "+ev(1, 2000000100)",
        "+ev(1, 2000000105)",
    ]);
    let lo = vec![vec![json!(1), json!(2000000100)]];
    assert_eq!(shop.rows("lo", None), lo);
    let head = shop.head();
    let out = shop.ok(&["commit", "-m", "tick", "--clock", "2000000106"]);
    assert!(out.contains("nothing to commit"), "{out}");
    assert_eq!(shop.head(), head, "the head stays");
    assert_eq!(shop.rows("lo", None), lo);
    verify(&shop);
    // Deleting the minimum moves the view: a commit, and the later value is the minimum
    // at the clock that commit carries.
    shop.ok(&[
        "commit",
        "-m",
        "d",
        "--clock",
        "2000000107",
        "-ev(1, 2000000100)",
    ]);
    assert_eq!(
        shop.rows("lo", None),
        vec![vec![json!(1), json!(2000000105)]]
    );
    verify(&shop);
}
