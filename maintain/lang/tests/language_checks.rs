//! Guards the rule language's checks: for each check, the exact rendered diagnostic (line,
//! column, snippet), every error of a program reported in one run, and the checked program
//! (assignments, filters, types, strata) of programs that pass.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use rnt_lang::check::{compile, Program};
use rnt_lang::diagnostic::{render_all, Source};
use rnt_lang::syntax::ast::{RelationKind, VarId};
use rnt_lang::Type;

/// Compiles `input` and compares the rendered diagnostics (or `ok`) with `expected`.
fn check(input: &str, expected: &str) {
    let source = Source::new("test.rnt", input);
    let actual = match compile(input) {
        Ok(_) => "ok\n".to_string(),
        Err(diagnostics) => render_all(&diagnostics, &source),
    };
    assert_eq!(actual, expected, "\n--- actual ---\n{actual}");
}

/// Joins lines, each ending with `\n`.
fn lines(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Compiles a program that must pass.
fn compile_ok(input: &str) -> Program {
    compile(input).unwrap_or_else(|diagnostics| {
        panic!(
            "{}",
            render_all(&diagnostics, &Source::new("test.rnt", input))
        )
    })
}

use common::SAMPLE;

#[test]
fn unknown_relation_in_body_head_and_negation() {
    check(
        "relation orders(id: int, customer: int, amount: int).\n\
         relation customers(id: int, plan: str).\n\
         view order_plan(id: int, plan: str).\n\
         order_plan(i, p) :- orders(i, c, _), customer(c, p).\n\
         order_plans(i, p) :- orders(i, _, _), customers(_, p), not x(i).\n",
        &lines(&[
            "error: unknown relation `customer`",
            " --> test.rnt:4:38",
            "  |",
            "4 | order_plan(i, p) :- orders(i, c, _), customer(c, p).",
            "  |                                      ^^^^^^^^",
            "  = help: did you mean `customers`?",
            "",
            "error: unknown relation `order_plans`",
            " --> test.rnt:5:1",
            "  |",
            "5 | order_plans(i, p) :- orders(i, _, _), customers(_, p), not x(i).",
            "  | ^^^^^^^^^^^",
            "  = help: did you mean `order_plan`?",
            "",
            "error: unknown relation `x`",
            " --> test.rnt:5:60",
            "  |",
            "5 | order_plans(i, p) :- orders(i, _, _), customers(_, p), not x(i).",
            "  |                                                            ^",
            "  = help: declare it with `relation`, `view`, `ephemeral` or `denial`",
        ]),
    );
}

#[test]
fn relation_or_attribute_declared_twice() {
    check(
        "relation orders(id: int, customer: int).\n\
         view orders(id: int).\n\
         view v(id: int, name: str, id: int).\n",
        &lines(&[
            "error: relation `orders` is declared twice",
            " --> test.rnt:2:6",
            "  |",
            "2 | view orders(id: int).",
            "  |      ^^^^^^",
            "note: first declared here",
            " --> test.rnt:1:10",
            "  |",
            "1 | relation orders(id: int, customer: int).",
            "  |          ^^^^^^",
            "",
            "error: attribute `id` is declared twice in `v`",
            " --> test.rnt:3:28",
            "  |",
            "3 | view v(id: int, name: str, id: int).",
            "  |                            ^^",
            "note: first declared here",
            " --> test.rnt:3:8",
            "  |",
            "3 | view v(id: int, name: str, id: int).",
            "  |        ^^",
        ]),
    );
}

#[test]
fn rule_for_a_base_relation() {
    check(
        "relation orders(id: int, amount: int).\n\
         orders(i, a) :- orders(i, b), a = b + 1.\n",
        &lines(&[
            "error: `orders` is a base relation, so no rule can derive it",
            " --> test.rnt:2:1",
            "  |",
            "2 | orders(i, a) :- orders(i, b), a = b + 1.",
            "  | ^^^^^^",
            "  = help: declare it as a `view` or `ephemeral` to define it by rules; \
             base relations change only by commits",
        ]),
    );
}

#[test]
fn arity_mismatch_in_body_head_and_negation() {
    check(
        "relation orders(id: int, amount: int).\n\
         view v(id: int).\n\
         v(i) :- orders(i).\n\
         v(i, a) :- orders(i, a), not orders(i, a, a).\n",
        &lines(&[
            "error: arity mismatch: `orders` has 2 attributes but the atom has 1 term",
            " --> test.rnt:3:9",
            "  |",
            "3 | v(i) :- orders(i).",
            "  |         ^^^^^^^^^",
            "note: declared here: `relation orders(id: int, amount: int).`",
            " --> test.rnt:1:10",
            "  |",
            "1 | relation orders(id: int, amount: int).",
            "  |          ^^^^^^",
            "",
            "error: arity mismatch: `v` has 1 attribute but the head has 2 terms",
            " --> test.rnt:4:1",
            "  |",
            "4 | v(i, a) :- orders(i, a), not orders(i, a, a).",
            "  | ^^^^^^^",
            "note: declared here: `view v(id: int).`",
            " --> test.rnt:2:6",
            "  |",
            "2 | view v(id: int).",
            "  |      ^",
            "",
            "error: arity mismatch: `orders` has 2 attributes but the atom has 3 terms",
            " --> test.rnt:4:30",
            "  |",
            "4 | v(i, a) :- orders(i, a), not orders(i, a, a).",
            "  |                              ^^^^^^^^^^^^^^^",
            "note: declared here: `relation orders(id: int, amount: int).`",
            " --> test.rnt:1:10",
            "  |",
            "1 | relation orders(id: int, amount: int).",
            "  |          ^^^^^^",
        ]),
    );
}

#[test]
fn variable_used_at_positions_of_different_types() {
    check(
        "relation orders(id: int, amount: int).\n\
         relation customers(id: int, plan: str).\n\
         view v(id: int).\n\
         v(c) :- orders(i, c), customers(i, c).\n",
        &lines(&[
            "error: type mismatch: `c` is str here (`customers.plan`) but int elsewhere",
            " --> test.rnt:4:36",
            "  |",
            "4 | v(c) :- orders(i, c), customers(i, c).",
            "  |                                    ^",
            "note: `c` is int here (`orders.amount`)",
            " --> test.rnt:4:19",
            "  |",
            "4 | v(c) :- orders(i, c), customers(i, c).",
            "  |                   ^",
        ]),
    );
    // The head's types count too, and so does an assignment's.
    check(
        "relation r(x: int).\nview v(s: str).\nv(y) :- r(x), y = x + 1.\n",
        &lines(&[
            "error: type mismatch: `y` is str here (`v.s`) but int elsewhere",
            " --> test.rnt:3:3",
            "  |",
            "3 | v(y) :- r(x), y = x + 1.",
            "  |   ^",
            "note: `y` is int here (`y = x + 1`)",
            " --> test.rnt:3:15",
            "  |",
            "3 | v(y) :- r(x), y = x + 1.",
            "  |               ^^^^^^^^^",
        ]),
    );
}

#[test]
fn constant_of_the_wrong_type() {
    check(
        "relation customers(id: int, plan: str).\n\
         view v(id: int, plan: str).\n\
         v(i, 5) :- customers(i, 7).\n",
        &lines(&[
            "error: type mismatch: `v.plan` is str, but `5` is int",
            " --> test.rnt:3:6",
            "  |",
            "3 | v(i, 5) :- customers(i, 7).",
            "  |      ^",
            "",
            "error: type mismatch: `customers.plan` is str, but `7` is int",
            " --> test.rnt:3:25",
            "  |",
            "3 | v(i, 5) :- customers(i, 7).",
            "  |                         ^",
        ]),
    );
}

#[test]
fn arithmetic_on_non_ints() {
    check(
        "relation customers(id: int, plan: str).\n\
         view v(id: int).\n\
         v(x) :- customers(i, p), x = i * p, i > -p, i < true + 1.\n",
        &lines(&[
            "error: type mismatch: `*` needs numbers (int or decimal), but `p` is str",
            " --> test.rnt:3:34",
            "  |",
            "3 | v(x) :- customers(i, p), x = i * p, i > -p, i < true + 1.",
            "  |                                  ^",
            "",
            "error: type mismatch: `-` needs a number, but `p` is str",
            " --> test.rnt:3:42",
            "  |",
            "3 | v(x) :- customers(i, p), x = i * p, i > -p, i < true + 1.",
            "  |                                          ^",
            "",
            "error: type mismatch: `+` needs numbers (int or decimal), but `true` is bool",
            " --> test.rnt:3:49",
            "  |",
            "3 | v(x) :- customers(i, p), x = i * p, i > -p, i < true + 1.",
            "  |                                                 ^^^^",
        ]),
    );
}

#[test]
fn comparisons_between_different_types_and_ordered_bools() {
    check(
        "relation customers(id: int, plan: str, vip: bool).\n\
         view v(id: int).\n\
         v(i) :- customers(i, p, b), p != i, b < true, p < \"m\", b != false.\n",
        &lines(&[
            "error: type mismatch: cannot compare str with int",
            " --> test.rnt:3:29",
            "  |",
            "3 | v(i) :- customers(i, p, b), p != i, b < true, p < \"m\", b != false.",
            "  |                             ^^^^^^",
            "  = help: `p` is str and `i` is int",
            "",
            "error: bools cannot be ordered with `<`",
            " --> test.rnt:3:37",
            "  |",
            "3 | v(i) :- customers(i, p, b), p != i, b < true, p < \"m\", b != false.",
            "  |                                     ^^^^^^^^",
            "  = help: bools compare only with `=` and `!=`",
        ]),
    );
}

#[test]
fn aggregate_types() {
    check(
        "relation t(k: int, s: str, b: bool).\n\
         view a(k: int, total: int).\n\
         view b(k: int, avg: int).\n\
         view c(k: int, least: bool).\n\
         view d(k: int, n: str).\n\
         view e(k: int, most: int).\n\
         a(k, sum(s)) :- t(k, s, _).\n\
         b(k, avg(v)) :- t(k, _, v).\n\
         c(k, min(v)) :- t(k, _, v).\n\
         d(k, count()) :- t(k, _, _).\n\
         e(k, max(s)) :- t(k, s, _).\n",
        &lines(&[
            "error: type mismatch: `sum` needs a number (int or decimal), but `s` is str",
            " --> test.rnt:7:10",
            "  |",
            "7 | a(k, sum(s)) :- t(k, s, _).",
            "  |          ^",
            "",
            "error: type mismatch: `avg` needs a number (int or decimal), but `v` is bool",
            " --> test.rnt:8:10",
            "  |",
            "8 | b(k, avg(v)) :- t(k, _, v).",
            "  |          ^",
            "",
            "error: type mismatch: `min` needs an ordered type (not bool), but `v` is bool",
            " --> test.rnt:9:10",
            "  |",
            "9 | c(k, min(v)) :- t(k, _, v).",
            "  |          ^",
            "",
            "error: type mismatch: `count()` is int, but `d.n` is str",
            "  --> test.rnt:10:6",
            "   |",
            "10 | d(k, count()) :- t(k, _, _).",
            "   |      ^^^^^^^",
            "",
            "error: type mismatch: `max(s)` is str, but `e.most` is int",
            "  --> test.rnt:11:6",
            "   |",
            "11 | e(k, max(s)) :- t(k, s, _).",
            "   |      ^^^^^^",
        ]),
    );
    // min and max take strings; the result has the argument's type.
    check(
        "relation t(k: int, s: str).\nview m(k: int, s: str).\nm(k, min(s)) :- t(k, s).\n",
        "ok\n",
    );
}

/// `count_distinct` takes a variable of any type and is an int.
#[test]
fn count_distinct_types() {
    check(
        "relation t(k: int, s: str, b: bool).\n\
         view a(k: int, n: int, m: int, o: int).\n\
         view c(k: int, n: str).\n\
         a(k, count_distinct(s), count_distinct(b), count_distinct(k)) :- t(k, s, b).\n\
         c(k, count_distinct(s)) :- t(k, s, _).\n",
        &lines(&[
            "error: type mismatch: `count_distinct(s)` is int, but `c.n` is str",
            " --> test.rnt:5:6",
            "  |",
            "5 | c(k, count_distinct(s)) :- t(k, s, _).",
            "  |      ^^^^^^^^^^^^^^^^^",
        ]),
    );
}

/// `concat` joins strs and is a str: an int or bool to join, or a str result in an int
/// column, is a type error with its snippet.
#[test]
fn concat_types() {
    check(
        "relation t(k: int, s: str, b: bool).\n\
         view a(k: int, n: str, m: int).\n\
         view c(k: int, n: str).\n\
         view d(k: int, n: str).\n\
         view e(k: int, s: str, m: int).\n\
         a(k, concat(s, \", \"), count()) :- t(k, s, _).\n\
         c(k, concat(k, \",\")) :- t(k, _, _).\n\
         d(k, concat(b, \",\")) :- t(k, _, b).\n\
         e(k, s, concat(s, \"\")) :- t(k, s, _).\n",
        &lines(&[
            "error: type mismatch: `concat` needs a str, but `k` is int",
            " --> test.rnt:7:13",
            "  |",
            "7 | c(k, concat(k, \",\")) :- t(k, _, _).",
            "  |             ^",
            "",
            "error: type mismatch: `concat` needs a str, but `b` is bool",
            " --> test.rnt:8:13",
            "  |",
            "8 | d(k, concat(b, \",\")) :- t(k, _, b).",
            "  |             ^",
            "",
            "error: type mismatch: `concat(s, \"\")` is str, but `e.m` is int",
            " --> test.rnt:9:9",
            "  |",
            "9 | e(k, s, concat(s, \"\")) :- t(k, s, _).",
            "  |         ^^^^^^^^^^^^^",
        ]),
    );
}

#[test]
fn unsafe_variables() {
    check(
        "relation r(x: int, y: int).\n\
         view v(x: int, n: int).\n\
         v(x, y) :- r(z, _).\n\
         v(x, z) :- r(x, _), not r(x, y), y > z.\n\
         v(x, n) :- r(x, _), n = m + 1.\n\
         view w(x: int, n: int).\n\
         w(x, sum(a)) :- r(x, _).\n\
         v(x, y) :- r(x, _), y = z + 1, z = y - 1.\n",
        &lines(&[
            "error: unsafe variable `x`: not bound by a positive atom or an assignment",
            " --> test.rnt:3:3",
            "  |",
            "3 | v(x, y) :- r(z, _).",
            "  |   ^",
            "  = help: every head variable must be bound by a positive atom or an assignment",
            "",
            "error: unsafe variable `y`: not bound by a positive atom or an assignment",
            " --> test.rnt:3:6",
            "  |",
            "3 | v(x, y) :- r(z, _).",
            "  |      ^",
            "  = help: every head variable must be bound by a positive atom or an assignment",
            "",
            "error: unsafe variable `z`: not bound by a positive atom or an assignment",
            " --> test.rnt:4:6",
            "  |",
            "4 | v(x, z) :- r(x, _), not r(x, y), y > z.",
            "  |      ^",
            "  = help: every head variable must be bound by a positive atom or an assignment",
            "",
            "error: unsafe variable `y`: not bound by a positive atom or an assignment",
            " --> test.rnt:4:30",
            "  |",
            "4 | v(x, z) :- r(x, _), not r(x, y), y > z.",
            "  |                              ^",
            "  = help: every variable of a `not` atom must be bound by a positive atom or an \
             assignment; write `_` for a position that may hold anything",
            "",
            "error: unsafe variable `m`: not bound by a positive atom or an assignment",
            " --> test.rnt:5:25",
            "  |",
            "5 | v(x, n) :- r(x, _), n = m + 1.",
            "  |                         ^",
            "  = help: the value of an assignment may only read variables bound by positive \
             atoms or by other assignments",
            "",
            "error: unsafe variable `a`: not bound by a positive atom or an assignment",
            " --> test.rnt:7:10",
            "  |",
            "7 | w(x, sum(a)) :- r(x, _).",
            "  |          ^",
            "  = help: an aggregated variable must be bound by a positive atom or an assignment",
            "",
            "error: unsafe variables `y`, `z`: each is assigned from another, in a cycle",
            " --> test.rnt:8:21",
            "  |",
            "8 | v(x, y) :- r(x, _), y = z + 1, z = y - 1.",
            "  |                     ^^^^^^^^^",
            "  = help: bind one of them with a positive atom",
        ]),
    );
}

#[test]
fn unsafe_variable_in_a_comparison_is_reported_once_per_rule() {
    check(
        "relation r(x: int).\nview v(x: int).\nv(x) :- r(x), q > x, q < 10, w = q.\n",
        &lines(&[
            "error: unsafe variable `q`: not bound by a positive atom or an assignment",
            " --> test.rnt:3:15",
            "  |",
            "3 | v(x) :- r(x), q > x, q < 10, w = q.",
            "  |               ^",
            "  = help: every variable of a comparison must be bound by a positive atom or an \
             assignment",
        ]),
    );
}

#[test]
fn wildcard_in_head() {
    check(
        "relation r(x: int).\nview v(x: int, y: int).\nv(x, _) :- r(x).\n",
        &lines(&[
            "error: wildcard `_` in a rule head",
            " --> test.rnt:3:6",
            "  |",
            "3 | v(x, _) :- r(x).",
            "  |      ^",
            "  = help: a head term is a variable, a constant or an aggregate",
        ]),
    );
}

#[test]
fn negation_through_recursion() {
    check(
        "relation r(x: int).\n\
         view p(x: int).\n\
         view q(x: int).\n\
         view s(x: int).\n\
         p(x) :- r(x), not p(x).\n\
         q(x) :- r(x), not s(x).\n\
         s(x) :- q(x).\n",
        &lines(&[
            "error: negation through recursion: `p` depends on `not p`",
            " --> test.rnt:5:15",
            "  |",
            "5 | p(x) :- r(x), not p(x).",
            "  |               ^^^^^^^^",
            "  = help: the program is not stratifiable: a relation cannot depend on its own \
             negation or aggregate over itself",
            "",
            "error: negation through recursion: `q` depends on `not s`, and `s` depends on `q`",
            " --> test.rnt:6:15",
            "  |",
            "6 | q(x) :- r(x), not s(x).",
            "  |               ^^^^^^^^",
            "  = help: the program is not stratifiable: a relation cannot depend on its own \
             negation or aggregate over itself",
        ]),
    );
}

#[test]
fn aggregation_through_recursion() {
    check(
        "relation r(x: int, y: int).\n\
         view reach(x: int, y: int).\n\
         view deg(x: int, n: int).\n\
         view big(x: int).\n\
         reach(x, y) :- r(x, y).\n\
         reach(x, z) :- reach(x, y), r(y, z).\n\
         reach(x, y) :- big(x), r(x, y).\n\
         deg(x, count()) :- reach(x, _).\n\
         big(x) :- deg(x, n), n > 10.\n\
         view cnt(x: int, n: int).\n\
         cnt(x, count()) :- cnt(x, _).\n",
        &lines(&[
            "error: aggregation through recursion: `deg` aggregates over `reach`, which \
             depends on `deg`",
            " --> test.rnt:8:8",
            "  |",
            "8 | deg(x, count()) :- reach(x, _).",
            "  |        ^^^^^^^",
            "  = help: the program is not stratifiable: a relation cannot depend on its own \
             negation or aggregate over itself",
            "",
            "error: aggregation through recursion: `cnt` aggregates over itself",
            "  --> test.rnt:11:8",
            "   |",
            "11 | cnt(x, count()) :- cnt(x, _).",
            "   |        ^^^^^^^",
            "   = help: the program is not stratifiable: a relation cannot depend on its own \
             negation or aggregate over itself",
        ]),
    );
}

#[test]
fn aggregating_relation_with_several_rules() {
    check(
        "relation r(x: int, y: int).\n\
         view total(x: int, n: int).\n\
         total(x, sum(y)) :- r(x, y).\n\
         total(x, 0) :- r(x, _).\n\
         total(x, count()) :- r(_, x).\n",
        &lines(&[
            "error: `total` has aggregates in its head, so it must have exactly one rule, \
             but it has 3",
            " --> test.rnt:4:1",
            "  |",
            "4 | total(x, 0) :- r(x, _).",
            "  | ^^^^^",
            "note: its first rule",
            " --> test.rnt:3:1",
            "  |",
            "3 | total(x, sum(y)) :- r(x, y).",
            "  | ^^^^^",
        ]),
    );
}

#[test]
fn every_error_of_a_program_is_reported_in_one_run() {
    let input = "relation r(x: int, s: str).\n\
                 view v(x: int).\n\
                 view v(y: int).\n\
                 v(x) :- r(x).\n\
                 v(y) :- r(x, _).\n\
                 v(x) :- r(x, s), s > 3.\n\
                 v(x) :- w(x).\n\
                 r(x, s) :- r(x, s).\n\
                 v(_) :- r(_, _).\n";
    let diagnostics = compile(input).unwrap_err();
    let source = Source::new("test.rnt", input);
    let found: Vec<(usize, &str)> = diagnostics
        .iter()
        .map(|d| {
            (
                source.line_col(d.span.start).0,
                d.message.split(':').next().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (3, "relation `v` is declared twice"),
            (4, "arity mismatch"),
            (5, "unsafe variable `y`"),
            (6, "type mismatch"),
            (7, "unknown relation `w`"),
            (8, "`r` is a base relation, so no rule can derive it"),
            (9, "wildcard `_` in a rule head"),
        ],
        "{}",
        render_all(&diagnostics, &source)
    );
}

#[test]
fn the_design_sample_checks_and_stratifies() {
    let program = compile_ok(SAMPLE);
    let kinds: Vec<(&str, RelationKind)> = program
        .relations
        .values()
        .map(|r| (r.name(), r.kind()))
        .collect();
    assert_eq!(kinds.len(), 8);
    assert_eq!(
        program.relation("big_order").unwrap().kind(),
        RelationKind::Ephemeral
    );
    assert_eq!(program.rules_of("reach").len(), 2);
    assert!(program.rules_of("orders").is_empty());
    assert!(program.relation("plan_total").unwrap().is_aggregated());

    let strata: Vec<(Vec<&str>, bool)> = program
        .strata
        .iter()
        .map(|s| {
            (
                s.relations.iter().map(String::as_str).collect(),
                s.recursive,
            )
        })
        .collect();
    assert_eq!(
        strata,
        [
            (vec!["big_order"], false),
            (vec!["order_plan"], false),
            (vec!["orphan"], false),
            (vec!["plan_total"], false),
            (vec!["reach"], true),
        ]
    );
    assert_eq!(program.strata.stratum_of("orders"), None);

    let plan_total = &program.rules_of("plan_total")[0];
    let types: Vec<(&str, Type)> = plan_total
        .rule
        .variables
        .iter()
        .zip(&plan_total.variable_types)
        .map(|(name, ty)| (name.as_str(), *ty))
        .collect();
    assert_eq!(
        types,
        [("p", Type::Str), ("a", Type::Int), ("c", Type::Int)]
    );
    let big_order = &program.rules_of("big_order")[0];
    assert_eq!(big_order.filters, [1]);
    assert!(big_order.assignments.is_empty());
}

#[test]
fn strata_put_dependencies_first() {
    let program = compile_ok(
        "relation e(x: int, y: int).\n\
         view top(x: int).\n\
         ephemeral path(x: int, y: int).\n\
         view a(x: int).\n\
         path(x, y) :- e(x, y).\n\
         path(x, z) :- path(x, y), e(y, z).\n\
         a(x) :- path(x, _), not top(x).\n\
         top(x) :- e(x, _), not path(x, x).\n",
    );
    let order: Vec<String> = program
        .strata
        .iter()
        .map(|s| s.relations.join(" "))
        .collect();
    assert_eq!(order, ["path", "top", "a"]);
    assert!(program.strata.strata[0].recursive);
}

#[test]
fn assignments_chain_in_dependency_order() {
    let program = compile_ok(
        "relation r(x: int, s: str).\n\
         view v(x: int, z: int, t: str, k: int).\n\
         v(x, z, t, k) :- z = y * 2, r(x, s), y = x + 1, t = s, 7 = k, x != y.\n",
    );
    let rule = &program.rules_of("v")[0];
    let name = |v: VarId| rule.rule.variable_name(v);
    let assigned: Vec<(&str, usize)> = rule
        .assignments
        .iter()
        .map(|a| (name(a.variable), a.literal))
        .collect();
    // Round one (in text order) binds k, t and y; round two binds z from y.
    assert_eq!(assigned, [("k", 4), ("t", 3), ("y", 2), ("z", 0)]);
    assert_eq!(rule.filters, [5]);
    let var = |n: &str| VarId(rule.rule.variables.iter().position(|v| v == n).unwrap() as u32);
    assert_eq!(rule.variable_type(var("t")), Type::Str);
    assert_eq!(rule.variable_type(var("z")), Type::Int);
}

#[test]
fn which_equality_assigns_does_not_depend_on_literal_order() {
    for body in ["r(x), z = x + 1, z = 4", "z = 4, z = x + 1, r(x)"] {
        let text = format!("relation r(x: int).\nview v(z: int).\nv(z) :- {body}.\n");
        let program = compile_ok(&text);
        let rule = &program.rules_of("v")[0];
        let assigned: Vec<String> = rule
            .assignments
            .iter()
            .map(|a| rnt_lang::canonical::literal_text(&rule.rule, &rule.rule.body[a.literal]))
            .collect();
        assert_eq!(assigned, ["z = 4"], "{body}");
        assert_eq!(rule.filters.len(), 1);
    }
}

#[test]
fn assigned_variables_count_as_bound_everywhere() {
    check(
        "relation r(x: int).\n\
         view v(x: int, n: int).\n\
         v(y, count()) :- r(x), y = x + 1, not r(y), y > 2.\n\
         view w(x: int, s: int).\n\
         w(x, sum(y)) :- r(x), y = x * x.\n",
        "ok\n",
    );
}

#[test]
fn an_equality_on_a_bound_variable_compares() {
    let program = compile_ok("relation r(x: int).\nview v(x: int).\nv(x) :- r(x), x = 5.\n");
    let rule = &program.rules_of("v")[0];
    assert!(rule.assignments.is_empty());
    assert_eq!(rule.filters, [1]);
}

#[test]
fn derived_relations_without_rules_are_empty_not_errors() {
    let program = compile_ok(
        "relation r(x: int).\nview v(x: int).\ndenial d(x: int).\nephemeral e(x: int).\n",
    );
    assert!(program.rules_of("v").is_empty());
    assert_eq!(program.strata.strata.len(), 3);
}

#[test]
fn recursion_through_positive_atoms_is_fine_and_lower_strata_may_be_negated() {
    check(
        "relation e(x: int, y: int).\n\
         view reach(x: int, y: int).\n\
         view unreachable(x: int, y: int).\n\
         view n(x: int, k: int).\n\
         reach(x, y) :- e(x, y).\n\
         reach(x, z) :- reach(x, y), reach(y, z).\n\
         unreachable(x, y) :- e(x, _), e(_, y), not reach(x, y).\n\
         n(x, count()) :- reach(x, _).\n",
        "ok\n",
    );
}

#[test]
fn canonical_text_of_a_checked_program_matches_its_syntax() {
    let program = compile_ok(SAMPLE);
    let parsed = rnt_lang::syntax::parse(SAMPLE).program;
    assert_eq!(
        program.canonical_text(),
        rnt_lang::canonical::canonical_text(&parsed)
    );
}

const OPTIONAL_BASE: &str =
    "relation r(a: int, b: int, c: int).\nrelation s(k: int).\nrelation t(k: int, v: int).\n";

/// `OPTIONAL_BASE`, then `rest`.
fn optional_program(rest: &str) -> String {
    format!("{OPTIONAL_BASE}{rest}\n")
}

#[test]
fn optional_atoms_join_in_dependency_order_or_are_refused_naming_why() {
    // Nested left joins in dependency order, whatever the text order: accepted.
    check(
        &optional_program(
            "view v(k: int, y: int?, z: int?).\nv(k, y, z) :- s(k), optional t(y, z), optional t(k, y).",
        ),
        "ok\n",
    );
    // A comparison on a new variable constrains it: the head column need not be nullable.
    check(
        &optional_program("view v(k: int, y: int).\nv(k, y) :- s(k), optional t(k, y), y > 3."),
        "ok\n",
    );
    check(
        &optional_program("view v(k: int, y: int?).\nv(k, y) :- s(k), optional t(y, _)."),
        &lines(&[
            "error: this `optional` atom shares no variable with the rule's other atoms",
            " --> test.rnt:5:18",
            "  |",
            "5 | v(k, y) :- s(k), optional t(y, _).",
            "  |                  ^^^^^^^^^^^^^^^^",
            "  = help: an optional atom joins on a variable bound by a plain atom or by an optional atom before it",
        ]),
    );
    check(
        &optional_program(
            "view v(k: int, y: int?).\nv(k, y) :- s(k), optional t(k, y), optional r(k, y, _).",
        ),
        &lines(&[
            "error: two `optional` atoms would each bind `y` first: their order is a choice",
            " --> test.rnt:5:36",
            "  |",
            "5 | v(k, y) :- s(k), optional t(k, y), optional r(k, y, _).",
            "  |                                    ^^^^^^^^^^^^^^^^^^^",
            "  = help: join one of them on a variable of the other, or make one plain",
            "note: the other",
            " --> test.rnt:5:18",
            "  |",
            "5 | v(k, y) :- s(k), optional t(k, y), optional r(k, y, _).",
            "  |                  ^^^^^^^^^^^^^^^^",
        ]),
    );
    check(
        &optional_program("view v(k: int, n: int).\nv(k, count(y)) :- s(k), optional t(k, y)."),
        &lines(&[
            "error: a rule that aggregates or windows cannot hold an `optional` atom: join in a view of its own, then aggregate or window over it",
            " --> test.rnt:5:25",
            "  |",
            "5 | v(k, count(y)) :- s(k), optional t(k, y).",
            "  |                         ^^^^^^^^^^^^^^^^",
        ]),
    );
    check(
        &optional_program("view v(k: int, y: int).\nv(k, y) :- s(k), optional t(k, y)."),
        &lines(&[
            "error: `y` may be null, but `v.y` is not nullable",
            " --> test.rnt:5:6",
            "  |",
            "5 | v(k, y) :- s(k), optional t(k, y).",
            "  |      ^",
            "  = help: declare it `int?`, or require a value in the body (`x is not null`)",
        ]),
    );
}

#[test]
fn an_optional_atom_s_new_variable_may_appear_in_it_once() {
    // `optional r(k, y, y)` unmatched would be `not r(k, _, _)`, which cannot say "no tuple
    // whose two columns agree": refused, with the one error (no "unsafe variable" after it).
    check(
        &optional_program("view v(k: int, y: int?).\nv(k, y) :- s(k), optional r(k, y, y)."),
        &lines(&[
            "error: `y` first appears in this `optional` atom twice: an optional atom's new variables may each appear once",
            " --> test.rnt:5:18",
            "  |",
            "5 | v(k, y) :- s(k), optional r(k, y, y).",
            "  |                  ^^^^^^^^^^^^^^^^^^^",
            "  = help: keep the matching rows in a view of their own (`same(a, y) :- r(a, y, y).`) and make that view optional",
        ]),
    );
}

#[test]
fn named_heads_and_atoms_name_each_column_once_and_never_mix() {
    let base = "relation t(k: int, v: int).\nview v(k: int, n: int).\n";
    // A named head, in any order, is the positional one: the same canonical program.
    let named = compile_ok(&format!("{base}v(n: count(), k: k) :- t(k, _).\n"));
    let positional = compile_ok(&format!("{base}v(k, count()) :- t(k, _).\n"));
    assert_eq!(named.canonical_text(), positional.canonical_text());
    check(
        &format!("{base}v(k: k) :- t(k, _).\n"),
        &lines(&[
            "error: a head names every column or none: `n` of `v` is not named",
            " --> test.rnt:3:1",
            "  |",
            "3 | v(k: k) :- t(k, _).",
            "  | ^^^^^^^",
        ]),
    );
    check(
        &format!("{base}v(k: k, count()) :- t(k, _).\n"),
        &lines(&[
            "error: a head's arguments are all named (`col: x`) or all positional",
            " --> test.rnt:3:9",
            "  |",
            "3 | v(k: k, count()) :- t(k, _).",
            "  |         ^^^^^",
        ]),
    );
    check(
        &format!("{base}v(k, 1) :- t(k: k, k: y).\n"),
        &lines(&[
            "error: column `k` is named twice",
            " --> test.rnt:3:20",
            "  |",
            "3 | v(k, 1) :- t(k: k, k: y).",
            "  |                    ^",
            "note: first here",
            " --> test.rnt:3:14",
            "  |",
            "3 | v(k, 1) :- t(k: k, k: y).",
            "  |              ^",
        ]),
    );
    check(
        &format!("{base}v(k, 1) :- t(k: k, y).\n"),
        &lines(&[
            "error: an atom's arguments are all named (`col: x`) or all positional",
            " --> test.rnt:3:20",
            "  |",
            "3 | v(k, 1) :- t(k: k, y).",
            "  |                    ^",
        ]),
    );
}

#[test]
fn a_default_of_the_wrong_type_or_on_a_view() {
    let text = lines(&[
        "relation t(a: int default \"x\").",
        "view v(a: int default 1).",
    ]);
    let source = Source::new("test.rnt", &text);
    let rendered = match compile(&text) {
        Ok(_) => "ok".to_string(),
        Err(diagnostics) => render_all(&diagnostics, &source),
    };
    assert!(rendered.contains("test.rnt:1:"), "{rendered}");
    assert!(rendered.contains("the default must be int"), "{rendered}");
    let view = compile("view v(a: int default 1).").map(|_| ());
    let Err(diagnostics) = view else {
        panic!("a view's default passed")
    };
    let rendered = render_all(
        &diagnostics,
        &Source::new("test.rnt", "view v(a: int default 1)."),
    );
    assert!(
        rendered.contains("only a base relation's attributes may have a default"),
        "{rendered}"
    );
}

/// A variable nothing types (`x = null`: a bare null has no type) is an error naming it,
/// not a rule the checker takes for typed; `cast(null as T)` types it.
#[test]
fn a_variable_only_a_bare_null_binds_has_no_type() {
    let program = |assignment: &str| {
        format!("relation r(a: int).\nview q(n: int).\nq(count(x)) :- r(_), {assignment}.\n")
    };
    let text = program("x = null");
    let diagnostics = rnt_lang::check::compile(&text).expect_err("an untyped variable");
    let rendered = rnt_lang::diagnostic::render_all(
        &diagnostics,
        &rnt_lang::diagnostic::Source::new("test.rnt", text.as_str()),
    );
    assert!(
        rendered.contains("cannot tell the type of `x`"),
        "{rendered}"
    );
    assert!(rendered.contains("cast(null as int)"), "{rendered}");
    assert!(rnt_lang::check::compile(&program("x = cast(null as int)")).is_ok());
}
