//! Guards window literals in the language (`v = F over (partition P… order O…)`): the
//! canonical text of every function (a round trip and a fixed point), the parse errors,
//! and each check's exact diagnostic. `UPDATE_EXPECT=1` rewrites the expectations.

use expect_test::{expect, Expect};
use rnt_lang::canonical::{canonical_text, normalize};
use rnt_lang::check::compile;
use rnt_lang::diagnostic::{render_all, Source};
use rnt_lang::syntax::parse;

const INPUT: &str = "relation orders(id: int, customer: int, amount: int).
relation plans(plan: str, id: int, amount: int).
relation other(id: int).
";

/// Compiles `INPUT` followed by `rules` and compares the rendered diagnostics (or `ok`,
/// then the canonical text, which must parse back to the same program) with `expect`.
fn check(rules: &str, expect: Expect) {
    let text = format!("{INPUT}{rules}");
    let actual = match compile(&text) {
        Ok(program) => {
            let canonical = program.canonical_text();
            let parsed = parse(&canonical);
            assert!(parsed.diagnostics.is_empty(), "{canonical}");
            assert_eq!(canonical_text(&parsed.program), canonical, "a fixed point");
            assert_eq!(
                normalize(&parsed.program),
                normalize(&parse(&text).program),
                "{canonical}"
            );
            format!("ok\n{canonical}")
        }
        Err(diagnostics) => render_all(&diagnostics, &Source::new("test.rnt", text.as_str())),
    };
    expect.assert_eq(&actual);
}

#[test]
fn every_function_round_trips() {
    check(
        "view w(c: int, i: int, r: int, d: int, n: int, s: int, k: int, l: int, m: str).
view top(p: str, i: int, k: int).
top(p, i, k) :- plans(p, i, a), k = rank() over (partition p order a desc, i), k <= 3.
view r1(c: int, i: int, n: int).
r1(c, i, n) :- orders(i, c, _), n = row_number() over (partition c order i).
view r2(c: int, i: int, n: int).
r2(c, i, n) :- orders(i, c, _), n = dense_rank()   over (partition c order i desc).
view r3(c: int, i: int, t: int).
r3(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
view r4(c: int, i: int, n: int).
r4(c, i, n) :- orders(i, c, _), n = count() over (order i).
view r5(c: int, i: int, p: int).
r5(c, i, p) :- orders(i, c, _), p = lag(i, 2, -1) over (partition c order i).
view r6(c: int, i: int, p: str).
r6(c, i, q) :- plans(q, i, _), p = lead(q, 1, \"none\") over (), c = i.
view r7(i: int, n: int).
r7(i, n) :- orders(i, c, a), a > 10, b = a * 2, n = row_number() over (partition c, a), m = n + b, m > 3.
",
        expect![[r#"
            ok
            relation orders(id: int, customer: int, amount: int).
            relation other(id: int).
            relation plans(plan: str, id: int, amount: int).
            view r1(c: int, i: int, n: int).
            view r2(c: int, i: int, n: int).
            view r3(c: int, i: int, t: int).
            view r4(c: int, i: int, n: int).
            view r5(c: int, i: int, p: int).
            view r6(c: int, i: int, p: str).
            view r7(i: int, n: int).
            view top(p: str, i: int, k: int).
            view w(c: int, i: int, r: int, d: int, n: int, s: int, k: int, l: int, m: str).

            r1(c, i, n) :- n = row_number() over (partition c order i), orders(i, c, _).
            r2(c, i, n) :- n = dense_rank() over (partition c order i desc), orders(i, c, _).
            r3(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
            r4(c, i, n) :- n = count() over (order i), orders(i, c, _).
            r5(c, i, p) :- orders(i, c, _), p = lag(i, 2, -1) over (partition c order i).
            r6(c, i, q) :- c = i, p = lead(q, 1, "none") over (), plans(q, i, _).
            r7(i, n) :- a > 10, b = a * 2, m = n + b, m > 3, n = row_number() over (partition c, a), orders(i, c, a).
            top(p, i, k) :- k <= 3, k = rank() over (partition p order a desc, i), plans(p, i, a).
        "#]],
    );
}

#[test]
fn syntax_errors() {
    let cases = [
        "view v(i: int).\nv(i) :- orders(i, _, _), n = foo() over (order i).\n",
        "view v(i: int).\nv(i) :- orders(i, _, _), n = rank().\n",
        "view v(i: int).\nv(i) :- orders(i, _, _), n = rank(i) over (order i).\n",
        "view v(i: int).\nv(i) :- orders(i, _, _), n = sum() over (order i).\n",
        "view v(i: int).\nv(i) :- orders(i, _, _), n = lag(i, x, 0) over (order i).\n",
        "view v(i: int).\nv(i) :- orders(i, _, _), n = lag(i, 1, _) over (order i).\n",
        "view v(i: int).\nv(i) :- orders(i, _, _), n = rank() over (order i asc).\n",
    ];
    let mut out = String::new();
    for case in cases {
        let text = format!("{INPUT}{case}");
        let parsed = parse(&text);
        out.push_str(&render_all(
            &parsed.diagnostics,
            &Source::new("test.rnt", text.as_str()),
        ));
    }
    expect![[r#"
        error: unknown window function `foo`
         --> test.rnt:5:30
          |
        5 | v(i) :- orders(i, _, _), n = foo() over (order i).
          |                              ^^^
          = help: the window functions are row_number(), rank(), dense_rank(), sum(x), count(), lag(x, n, d) and lead(x, n, d), each followed by `over (partition … order …)`
        error: expected `over (partition … order …)` after `rank(…)`, found `.`
         --> test.rnt:5:36
          |
        5 | v(i) :- orders(i, _, _), n = rank().
          |                                    ^
          = help: a window function in a body reads its rows from `over (partition P order O)`, as in `k = rank() over (partition p order a desc)`
        error: `rank()` takes no argument, found `i`
         --> test.rnt:5:35
          |
        5 | v(i) :- orders(i, _, _), n = rank(i) over (order i).
          |                                   ^
        error: expected a variable, as in `sum(x)`, found `)`
         --> test.rnt:5:34
          |
        5 | v(i) :- orders(i, _, _), n = sum() over (order i).
          |                                  ^
        error: expected a non-negative int literal (the row offset), as in `lag(x, 1, 0)`, found `x`
         --> test.rnt:5:37
          |
        5 | v(i) :- orders(i, _, _), n = lag(i, x, 0) over (order i).
          |                                     ^
        error: `lag`'s default is a constant, the value where no such row exists
         --> test.rnt:5:40
          |
        5 | v(i) :- orders(i, _, _), n = lag(i, 1, _) over (order i).
          |                                        ^
        error: expected `order`, `,`, `desc` or `)` in `over (partition … order …)`, found `asc`
         --> test.rnt:5:51
          |
        5 | v(i) :- orders(i, _, _), n = rank() over (order i asc).
          |                                                   ^^^
    "#]].assert_eq(&out);
}

#[test]
fn two_atoms_and_a_negation() {
    check(
        "view v(i: int, n: int).
v(i, n) :- orders(i, c, _), other(c), n = rank() over (partition c order i).
view u(i: int, n: int).
u(i, n) :- orders(i, c, _), not other(c), n = rank() over (partition c order i).
",
        expect![[r#"
            error: a rule with a window literal reads exactly one positive atom, its input, but this one reads 2
             --> test.rnt:5:39
              |
            5 | v(i, n) :- orders(i, c, _), other(c), n = rank() over (partition c order i).
              |                                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
              = help: join first in a view of its own, then window over that view

            error: a rule with a window literal has no `not`
             --> test.rnt:7:29
              |
            7 | u(i, n) :- orders(i, c, _), not other(c), n = rank() over (partition c order i).
              |                             ^^^^^^^^^^^^
              = help: filter the input in a view of its own, then window over that view
            note: the window
             --> test.rnt:7:43
              |
            7 | u(i, n) :- orders(i, c, _), not other(c), n = rank() over (partition c order i).
              |                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
        "#]],
    );
}

#[test]
fn partition_and_order_must_be_variables_of_the_atom() {
    check(
        "view v(i: int, n: int).
v(i, n) :- orders(i, c, a), b = a + 1, n = rank() over (partition b order z).
view u(i: int, n: int).
u(i, c) :- orders(i, c, _), c = row_number() over (order i).
",
        expect![[r#"
            error: `b` in `partition` is not a variable of the input `orders(i, c, a)`
             --> test.rnt:5:67
              |
            5 | v(i, n) :- orders(i, c, a), b = a + 1, n = rank() over (partition b order z).
              |                                                                   ^
              = help: `partition` and `order` list variables of the rule's positive atom

            error: `z` in `order` is not a variable of the input `orders(i, c, a)`
             --> test.rnt:5:75
              |
            5 | v(i, n) :- orders(i, c, a), b = a + 1, n = rank() over (partition b order z).
              |                                                                           ^
              = help: `partition` and `order` list variables of the rule's positive atom

            error: the result of a window is a new variable, but `c` is bound by `orders(i, c, _)`
             --> test.rnt:7:29
              |
            7 | u(i, c) :- orders(i, c, _), c = row_number() over (order i).
              |                             ^
        "#]],
    );
}

#[test]
fn windows_only_in_a_views_only_rule() {
    check(
        "denial d(i: int).
d(i) :- orders(i, c, _), n = rank() over (partition c order i), n > 5.
ephemeral e(i: int).
e(i) :- orders(i, c, _), n = rank() over (partition c order i), n > 5.
view v(i: int).
v(i) :- orders(i, c, _), n = rank() over (partition c order i), n = 1.
v(i) :- other(i).
view g(c: int, n: int).
g(c, count()) :- orders(i, c, _), n = rank() over (partition c order i).
view two(i: int).
two(i) :- orders(i, c, _), n = rank() over (order i), m = rank() over (order c).
",
        expect![[r#"
            error: a window literal may appear only in a view's rule, but `d` is a denial
             --> test.rnt:5:26
              |
            5 | d(i) :- orders(i, c, _), n = rank() over (partition c order i), n > 5.
              |                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
              = help: declare a view with the window, and read that view here

            error: a window literal may appear only in a view's rule, but `e` is an ephemeral
             --> test.rnt:7:26
              |
            7 | e(i) :- orders(i, c, _), n = rank() over (partition c order i), n > 5.
              |                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
              = help: declare a view with the window, and read that view here

            error: `v` has a window literal in a rule, so it must have exactly one rule, but it has 2
              --> test.rnt:10:1
               |
            10 | v(i) :- other(i).
               | ^
            note: its first rule
              --> test.rnt:9:1
               |
             9 | v(i) :- orders(i, c, _), n = rank() over (partition c order i), n = 1.
               | ^

            error: a rule with a window literal cannot aggregate in its head
              --> test.rnt:12:6
               |
            12 | g(c, count()) :- orders(i, c, _), n = rank() over (partition c order i).
               |      ^^^^^^^
               = help: aggregate over the window's view in a rule of its own
            note: the window
              --> test.rnt:12:35
               |
            12 | g(c, count()) :- orders(i, c, _), n = rank() over (partition c order i).
               |                                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

            error: a rule has at most one window literal
              --> test.rnt:14:55
               |
            14 | two(i) :- orders(i, c, _), n = rank() over (order i), m = rank() over (order c).
               |                                                       ^^^^^^^^^^^^^^^^^^^^^^^^^
               = help: compute the first window in a view of its own, then window over it
            note: the first window
              --> test.rnt:14:28
               |
            14 | two(i) :- orders(i, c, _), n = rank() over (order i), m = rank() over (order c).
               |                            ^^^^^^^^^^^^^^^^^^^^^^^^^
        "#]],
    );
}

#[test]
fn types_and_recursion() {
    check(
        "view v(i: int, s: str).
v(i, s) :- plans(p, i, _), s = sum(p) over (order i).
view w(i: int, s: int).
w(i, s) :- plans(p, i, _), s = lag(p, 1, 0) over (order i).
view x(i: int, s: str).
x(i, s) :- orders(i, _, _), s = rank() over (order i).
view loop(i: int, n: int).
loop(i, n) :- loop(i, _), n = row_number() over (order i).
",
        expect![[r#"
            error: type mismatch: `s` is str here (`v.s`) but int elsewhere
             --> test.rnt:5:6
              |
            5 | v(i, s) :- plans(p, i, _), s = sum(p) over (order i).
              |      ^
            note: `s` is int here (`s = sum(p) over (order i)`)
             --> test.rnt:5:28
              |
            5 | v(i, s) :- plans(p, i, _), s = sum(p) over (order i).
              |                            ^

            error: type mismatch: `sum` needs a number (int or decimal), but `p` is str
             --> test.rnt:5:36
              |
            5 | v(i, s) :- plans(p, i, _), s = sum(p) over (order i).
              |                                    ^

            error: type mismatch: `lag`'s default is int, but `p` is str
             --> test.rnt:7:36
              |
            7 | w(i, s) :- plans(p, i, _), s = lag(p, 1, 0) over (order i).
              |                                    ^

            error: type mismatch: `s` is str here (`x.s`) but int elsewhere
             --> test.rnt:9:6
              |
            9 | x(i, s) :- orders(i, _, _), s = rank() over (order i).
              |      ^
            note: `s` is int here (`s = rank() over (order i)`)
             --> test.rnt:9:29
              |
            9 | x(i, s) :- orders(i, _, _), s = rank() over (order i).
              |                             ^

            error: window through recursion: `loop` windows over itself
              --> test.rnt:11:27
               |
            11 | loop(i, n) :- loop(i, _), n = row_number() over (order i).
               |                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
               = help: the program is not stratifiable: a relation cannot window over itself
        "#]],
    );
}

/// A program without windows keeps its canonical text (and so its state hashes).
#[test]
fn programs_without_windows_are_unchanged() {
    let text = "relation orders(id: int, customer: int, amount: int).
view big(id: int).
big(i) :- orders(i, _, a), a > 10.
";
    let expected = "relation orders(id: int, customer: int, amount: int).
view big(id: int).

big(i) :- a > 10, orders(i, _, a).
";
    let program = compile(text).expect("compiles");
    assert_eq!(program.canonical_text(), expected);
}

/// `partition` with an empty list is the one partition of every row, as no `partition`
/// says (issue 26: the README's "either list may be empty"), before `order` or `)`.
#[test]
fn an_empty_partition_list_is_one_partition() {
    let text = |over: &str| {
        format!(
            "relation orders(id: int, customer: int, amount: int).\nview v(i: int, n: int).\n\
             v(i, n) :- orders(i, _, _), n = rank() over ({over}).\n"
        )
    };
    let canonical = |over: &str| {
        rnt_lang::check::compile(&text(over))
            .map(|p| p.canonical_text())
            .unwrap_or_else(|e| panic!("`{over}` does not compile: {e:?}"))
    };
    assert_eq!(canonical("partition order i"), canonical("order i"));
    assert_eq!(
        canonical("partition order i desc"),
        canonical("order i desc")
    );
    assert_eq!(canonical("partition"), canonical(""));
}

/// A running `sum` of a decimal is a decimal(38, s) at the argument's scale, as the
/// aggregate `sum` is: a head column of that type takes it, an int column refuses it, and a
/// nullable argument still needs its rows filtered.
#[test]
fn a_running_sum_of_a_decimal_is_a_decimal_at_its_scale() {
    let program = |head: &str, filter: &str| {
        format!(
            "relation pay(id: int, c: int, a: decimal(8, 2), b: decimal(8, 2)?).\n\
             view v(i: int, t: {head}).\n\
             v(i, t) :- pay(i, c, a, b){filter}, t = sum(a) over (partition c order i).\n\
             view w(i: int, t: decimal(38, 2)).\n\
             w(i, t) :- pay(i, c, _, b), b is not null, t = sum(b) over (order i).\n"
        )
    };
    assert!(compile(&program("decimal(38, 2)", "")).is_ok());
    let refused = |head: &str| {
        let text = program(head, "");
        let diagnostics = compile(&text).expect_err("an int column refuses a decimal sum");
        render_all(&diagnostics, &Source::new("test.rnt", text.as_str()))
    };
    let int_head = refused("int");
    assert!(
        int_head.contains("is decimal(38, 2) here") || int_head.contains("decimal(38, 2)"),
        "{int_head}"
    );
    let unfiltered = "relation pay(id: int, b: decimal(8, 2)?).\n\
                      view w(i: int, t: decimal(38, 2)).\n\
                      w(i, t) :- pay(i, b), t = sum(b) over (order i).\n";
    let diagnostics = compile(unfiltered).expect_err("a nullable argument is refused");
    let rendered = render_all(&diagnostics, &Source::new("test.rnt", unfiltered));
    assert!(rendered.contains("may be null"), "{rendered}");
}
