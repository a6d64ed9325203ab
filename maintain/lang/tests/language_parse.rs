//! Guards the rule language's grammar (docs/design.md "Language"): every construct parses to the
//! expected tree, syntax errors render with exact positions, and no input panics the parser.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use proptest::prelude::*;
use rnt_lang::check::compile;
use rnt_lang::diagnostic::{render_all, Source};
use rnt_lang::syntax::ast::{
    AggregateFn, ArithOp, CmpOp, Expr, ExprKind, HeadTerm, Literal, Program, RelationKind, Rule,
    TermKind, VarId,
};
use rnt_lang::syntax::{parse, BODY_LITERALS_MAX, EXPR_DEPTH_MAX, TERMS_MAX};
use rnt_lang::{Type, Value};

use common::SAMPLE;

/// Parses a text that must have no syntax errors.
fn parse_ok(text: &str) -> Program {
    let parsed = parse(text);
    let source = Source::new("test.rnt", text);
    assert!(
        parsed.diagnostics.is_empty(),
        "{}",
        render_all(&parsed.diagnostics, &source)
    );
    parsed.program
}

/// Parses a text holding exactly one rule.
fn rule(text: &str) -> Rule {
    let mut program = parse_ok(text);
    assert_eq!(program.rules.len(), 1);
    program.rules.remove(0)
}

/// The single comparison of the rule `r(x) :- s(x), <comparison>.`
fn comparison_of(text: &str) -> (Rule, rnt_lang::syntax::ast::Comparison) {
    let rule = rule(&format!("r(x) :- s(x), {text}."));
    let comparison = rule.comparisons().next().expect("a comparison").clone();
    (rule, comparison)
}

/// Renders the syntax errors of a text.
fn syntax_errors(text: &str) -> String {
    let parsed = parse(text);
    render_all(&parsed.diagnostics, &Source::new("test.rnt", text))
}

/// Checks the rendered syntax errors of `input` against `expected` exactly.
fn check(input: &str, expected: &str) {
    let actual = syntax_errors(input);
    assert_eq!(actual, expected, "\n--- actual ---\n{actual}");
}

fn var(rule: &Rule, name: &str) -> VarId {
    let index = rule
        .variables
        .iter()
        .position(|v| v == name)
        .expect("variable exists");
    VarId(index as u32)
}

/// A compact rendering of an expression tree, fully parenthesized.
fn tree(rule: &Rule, expr: &Expr) -> String {
    match &expr.kind {
        ExprKind::Var(v) => rule.variable_name(*v).to_string(),
        ExprKind::Const(value) => format!("{value}"),
        ExprKind::Neg(inner) => format!("(neg {})", tree(rule, inner)),
        ExprKind::Binary { op, left, right } => {
            format!(
                "({} {} {})",
                op.symbol(),
                tree(rule, left),
                tree(rule, right)
            )
        }
        ExprKind::Call { function, args } => {
            let args: Vec<String> = args.iter().map(|a| tree(rule, a)).collect();
            format!("({} {})", function.name(), args.join(" "))
        }
        ExprKind::Compare { op, left, right } => {
            format!(
                "({} {} {})",
                op.symbol(),
                tree(rule, left),
                tree(rule, right)
            )
        }
        ExprKind::Logic { op, left, right } => {
            format!("({} {} {})", op.word(), tree(rule, left), tree(rule, right))
        }
        ExprKind::Not(inner) => format!("(not {})", tree(rule, inner)),
        ExprKind::IsNull { expr, negated } => {
            let test = if *negated { "is-not-null" } else { "is-null" };
            format!("({test} {})", tree(rule, expr))
        }
        ExprKind::Case {
            branches,
            otherwise,
        } => {
            let mut parts: Vec<String> = branches
                .iter()
                .map(|(c, v)| format!("{} {}", tree(rule, c), tree(rule, v)))
                .collect();
            if let Some(otherwise) = otherwise {
                parts.push(format!("else {}", tree(rule, otherwise)));
            }
            format!("(case {})", parts.join(" "))
        }
        ExprKind::Cast { expr, to } => format!("(cast {} {to})", tree(rule, expr)),
    }
}

#[test]
fn conditions_parse_with_sql_precedence() {
    for (text, expected) in [
        (
            "x = (a > 1 or b < 2 and c = 3)",
            "(or (> a 1) (and (< b 2) (= c 3)))",
        ),
        (
            "x = (not a > 1 and b is null)",
            "(and (not (> a 1)) (is-null b))",
        ),
        ("x = (a + 1 >= b * 2)", "(>= (+ a 1) (* b 2))"),
        ("x = ((a or b) and c)", "(and (or a b) c)"),
        (
            "x = case when a > 1 then \"big\" when a is not null then \"small\" else \"none\" end",
            "(case (> a 1) \"big\" (is-not-null a) \"small\" else \"none\")",
        ),
        ("x = cast(a as decimal(10, 2))", "(cast a decimal(10, 2))"),
        ("x = like(s, \"a%\")", "(like s \"a%\")"),
        ("x = nullif(a, 0)", "(nullif a 0)"),
    ] {
        let (rule, comparison) = comparison_of(text);
        assert_eq!(tree(&rule, &comparison.right), expected, "{text}");
    }
}

#[test]
fn a_condition_literal_is_a_filter_and_reads_back_from_its_canonical_text() {
    let text = "relation t(a: int, b: int?, s: str?).\nview v(a: int).\n\
                v(a) :- t(a, b, s), (b > 2 or s is null), (like(s, \"a%\")), (not (a = 3)), \
                (a = 1) = true, a + 0 >= 0 and b != 7.\n";
    let program = rnt_lang::check::compile(text).expect("compiles");
    let canonical = program.canonical_text();
    assert!(
        canonical.contains(
            "v(a) :- (a + 0 >= 0 and b != 7), (b > 2 or s is null), (like(s, \"a%\")), \
             (not (a = 3)), a = 1, t(a, b, s)."
        ),
        "{canonical}"
    );
    let again = rnt_lang::check::compile(&canonical).expect("the canonical text compiles");
    assert_eq!(again.canonical_text(), canonical);
}

#[test]
fn the_design_sample_parses() {
    let program = parse_ok(SAMPLE);
    let declared: Vec<(RelationKind, &str, usize)> = program
        .declarations
        .iter()
        .map(|d| (d.kind, d.name.name.as_str(), d.arity()))
        .collect();
    use RelationKind::*;
    assert_eq!(
        declared,
        [
            (Relation, "orders", 3),
            (Relation, "customers", 2),
            (Relation, "edge", 2),
            (View, "order_plan", 2),
            (View, "plan_total", 3),
            (View, "reach", 2),
            (Ephemeral, "big_order", 1),
            (Denial, "orphan", 1),
        ]
    );
    assert_eq!(program.declarations[1].types(), [Type::Int, Type::Str]);
    let heads: Vec<&str> = program
        .rules
        .iter()
        .map(|r| r.head.relation.name.as_str())
        .collect();
    assert_eq!(
        heads,
        [
            "order_plan",
            "plan_total",
            "reach",
            "reach",
            "big_order",
            "orphan"
        ]
    );

    let plan_total = &program.rules[1];
    let functions: Vec<AggregateFn> = plan_total.head.aggregates().map(|a| a.function).collect();
    assert_eq!(functions, [AggregateFn::Sum, AggregateFn::Count]);
    assert!(plan_total.is_aggregated() && !program.rules[0].is_aggregated());

    let orphan = &program.rules[5];
    let negated: Vec<&str> = orphan
        .negative_atoms()
        .map(|a| a.relation.name.as_str())
        .collect();
    assert_eq!(negated, ["customers"]);

    let big_order = &program.rules[4];
    let comparison = big_order.comparisons().next().unwrap();
    assert_eq!(comparison.op, CmpOp::Gt);
    assert_eq!(comparison.left.as_var(), Some(var(big_order, "a")));
    assert_eq!(comparison.right.kind, ExprKind::Const(Value::Int(900)));

    // Spans are byte offsets into the text.
    let head = &program.rules[0].head;
    assert_eq!(&SAMPLE[head.span.start..head.span.end], "order_plan(i, p)");
}

#[test]
fn variables_are_interned_per_rule_and_wildcards_are_not_variables() {
    let rule = rule("r(x, y) :- s(x, _, y, _), t(y, x).");
    assert_eq!(rule.variables, ["x", "y"]);
    let atom = rule.positive_atoms().next().unwrap();
    let kinds: Vec<&TermKind> = atom.terms.iter().map(|t| &t.kind).collect();
    assert_eq!(
        kinds,
        [
            &TermKind::Var(VarId(0)),
            &TermKind::Wildcard,
            &TermKind::Var(VarId(1)),
            &TermKind::Wildcard
        ]
    );
    // `_x` is an ordinary variable.
    assert_eq!(self::rule("r(_x) :- s(_x).").variables, ["_x"]);
}

#[test]
fn constants_ints_strings_and_bools() {
    let rule = rule(
        r#"r(x) :- s(x, -5, 9223372036854775807, -9223372036854775808, "a\"b\\c\n\u00e9", true, false)."#,
    );
    let atom = rule.positive_atoms().next().unwrap();
    let constants: Vec<&TermKind> = atom.terms.iter().skip(1).map(|t| &t.kind).collect();
    assert_eq!(
        constants,
        [
            &TermKind::Const(Value::Int(-5)),
            &TermKind::Const(Value::Int(i64::MAX)),
            &TermKind::Const(Value::Int(i64::MIN)),
            &TermKind::Const(Value::Str("a\"b\\c\n\u{e9}".to_string())),
            &TermKind::Const(Value::Bool(true)),
            &TermKind::Const(Value::Bool(false)),
        ]
    );
    // The span of a negative constant covers its sign.
    let span = atom.terms[1].span;
    assert_eq!(span.len(), 2);
}

#[test]
fn head_terms_constants_and_every_aggregate() {
    let rule = rule(
        r#"r(k, "c", 7, count(), sum(a), min(a), max(a), avg(a), count_distinct(a)) :- s(k, a)."#,
    );
    let functions: Vec<(AggregateFn, Option<VarId>)> = rule
        .head
        .aggregates()
        .map(|a| (a.function, a.argument.map(|v| v.id)))
        .collect();
    let a = Some(var(&rule, "a"));
    use AggregateFn::*;
    assert_eq!(
        functions,
        [
            (Count, None),
            (Sum, a),
            (Min, a),
            (Max, a),
            (Avg, a),
            (CountDistinct, a)
        ]
    );
    let concat = self::rule(r#"r(k, concat(a, ", "), concat(a, "")) :- s(k, a)."#);
    let separators: Vec<(AggregateFn, Option<&str>)> = concat
        .head
        .aggregates()
        .map(|a| (a.function, a.separator.as_deref()))
        .collect();
    assert_eq!(separators, [(Concat, Some(", ")), (Concat, Some(""))]);
    assert!(
        matches!(&rule.head.terms[1], HeadTerm::Term(t) if t.kind == TermKind::Const(Value::Str("c".into())))
    );
    // An aggregate name not followed by `(` is a variable.
    assert_eq!(
        self::rule("r(count, sum) :- s(count, sum).").variables,
        ["count", "sum"]
    );
}

#[test]
fn comparison_operators() {
    for (text, op) in [
        ("x = 1", CmpOp::Eq),
        ("x != 1", CmpOp::Ne),
        ("x < 1", CmpOp::Lt),
        ("x <= 1", CmpOp::Le),
        ("x > 1", CmpOp::Gt),
        ("x >= 1", CmpOp::Ge),
    ] {
        assert_eq!(comparison_of(text).1.op, op, "{text}");
    }
}

#[test]
fn arithmetic_precedence_associativity_and_unary_minus() {
    for (text, expected) in [
        ("x = a + b * c", "(+ a (* b c))"),
        ("x = a * b + c", "(+ (* a b) c)"),
        ("x = a - b - c", "(- (- a b) c)"),
        ("x = a - (b - c)", "(- a (- b c))"),
        ("x = a / b % c", "(% (/ a b) c)"),
        ("x = (a + b) * c", "(* (+ a b) c)"),
        ("x = -a * -3", "(* (neg a) -3)"),
        ("x = - 3", "-3"),
        ("x = -(3)", "(neg 3)"),
        ("x = --a", "(neg (neg a))"),
        ("x = a - -3", "(- a -3)"),
    ] {
        let (rule, comparison) = comparison_of(text);
        assert_eq!(tree(&rule, &comparison.right), expected, "{text}");
    }
    // Either side may be an expression.
    let (rule, comparison) = comparison_of("a + 1 < b * 2");
    assert_eq!(tree(&rule, &comparison.left), "(+ a 1)");
    assert_eq!(tree(&rule, &comparison.right), "(* b 2)");
    assert!(matches!(
        comparison.right.kind,
        ExprKind::Binary {
            op: ArithOp::Mul,
            ..
        }
    ));
}

#[test]
fn keywords_are_contextual() {
    let program = parse_ok(
        "view not(x: int).\n\
         relation view(x: int).\n\
         not(x) :- view(x), not not(x), not = 1.\n",
    );
    assert_eq!(program.declarations[0].name.name, "not");
    assert_eq!(program.declarations[1].name.name, "view");
    let rule = &program.rules[0];
    assert_eq!(rule.head.relation.name, "not");
    assert!(matches!(&rule.body[1], Literal::Negative { atom, .. } if atom.relation.name == "not"));
    assert!(matches!(&rule.body[2], Literal::Comparison(c) if c.left.as_var().is_some()));
    assert_eq!(rule.variables, ["x", "not"]);
}

#[test]
fn comments_layout_and_line_endings_do_not_matter() {
    let text = "relation r(x: int, s: str). # a comment with \"quotes\" and :- .\r\n\
                view v(x: int).\r\n\
                v(x) :- # the head\r\n\
                \tr(x, \"# not a comment\"),\r\n   x > 1 . # end";
    let program = parse_ok(text);
    assert_eq!(program.declarations.len(), 2);
    let rule = &program.rules[0];
    let atom = rule.positive_atoms().next().unwrap();
    assert_eq!(
        atom.terms[1].kind,
        TermKind::Const(Value::Str("# not a comment".into()))
    );
    assert_eq!(rule.body.len(), 2);
    assert_eq!(parse_ok("").declarations.len(), 0);
    assert_eq!(parse_ok("  # only a comment").rules.len(), 0);
}

#[test]
fn nullary_relations() {
    let program = parse_ok("relation flag().\ndenial raised().\nraised() :- flag().\n");
    assert_eq!(program.declarations[0].arity(), 0);
    assert_eq!(program.declarations[1].kind, RelationKind::Denial);
    assert_eq!(program.rules[0].head.terms.len(), 0);
}

#[test]
fn rule_without_body() {
    check(
        "relation r(x: int).\nr(1).\n",
        "error: a rule needs a body: `head :- literal, ... .`\n \
         --> test.rnt:2:1\n  \
         |\n\
         2 | r(1).\n  \
         | ^^^^\n  \
         = help: a program holds no facts; add tuples to a base relation with `rnt commit`\n",
    );
}

/// Joins lines with `\n` (every line, the last included, ends with one).
fn lines(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn int_out_of_range() {
    check(
        "v(x) :- r(x), x = 9223372036854775808.\nv(x) :- r(x, -9223372036854775809).",
        &lines(&[
            "error: integer literal `9223372036854775808` is out of range for int",
            " --> test.rnt:1:19",
            "  |",
            "1 | v(x) :- r(x), x = 9223372036854775808.",
            "  |                   ^^^^^^^^^^^^^^^^^^^",
            "  = help: ints are 64-bit: -9223372036854775808 to 9223372036854775807",
            "",
            "error: integer literal `-9223372036854775809` is out of range for int",
            " --> test.rnt:2:15",
            "  |",
            "2 | v(x) :- r(x, -9223372036854775809).",
            "  |               ^^^^^^^^^^^^^^^^^^^",
            "  = help: ints are 64-bit: -9223372036854775808 to 9223372036854775807",
        ]),
    );
}

#[test]
fn malformed_tokens() {
    check(
        "view w(x: float).\nv(x) :- r(x), x > 1.5e0, x == 2, s = 'a'.\nv(x) :- r(x), s = \"abc.\n\
         v(x) :- r(x), !r(x), s = \"\\q\".\n",
        &lines(&[
            "error: unknown type `float`",
            " --> test.rnt:1:11",
            "  |",
            "1 | view w(x: float).",
            "  |           ^^^^^",
            "  = help: the types are int, str, bool, decimal(p, s), date and timestamp; `T?` may hold null",
            "",
            "error: exponents are not written in decimal literals",
            " --> test.rnt:2:19",
            "  |",
            "2 | v(x) :- r(x), x > 1.5e0, x == 2, s = 'a'.",
            "  |                   ^^^^^",
            "  = help: write the digits out (`1000.0`, not `1.0e3`): decimals are exact",
            "",
            "error: `==` is not an operator",
            " --> test.rnt:2:28",
            "  |",
            "2 | v(x) :- r(x), x > 1.5e0, x == 2, s = 'a'.",
            "  |                            ^^",
            "  = help: equality is written `=`",
            "",
            "error: string literals use double quotes",
            " --> test.rnt:2:38",
            "  |",
            "2 | v(x) :- r(x), x > 1.5e0, x == 2, s = 'a'.",
            "  |                                      ^^^",
            "  = help: write \"...\"",
            "",
            "error: unterminated string literal",
            " --> test.rnt:3:19",
            "  |",
            "3 | v(x) :- r(x), s = \"abc.",
            "  |                   ^^^^^",
            "  = help: close the string with `\"` on the same line",
            "",
            "error: unexpected character `!`",
            " --> test.rnt:4:15",
            "  |",
            "4 | v(x) :- r(x), !r(x), s = \"\\q\".",
            "  |               ^",
            "  = help: inequality is written `!=`; negation is `not r(...)`",
            "",
            "error: invalid string literal: unknown escape `\\q` in string",
            " --> test.rnt:4:26",
            "  |",
            "4 | v(x) :- r(x), !r(x), s = \"\\q\".",
            "  |                          ^^^^",
            "  = help: the escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
        ]),
    );
}

#[test]
fn missing_period_points_after_the_last_token() {
    check(
        "relation r(x: int).\nview v(x: int).\nv(x) :- r(x)\nview u(x: int).\nu(x) :- r(x).\n",
        &lines(&[
            "error: expected `,` or `.` after a body literal, found `view`",
            " --> test.rnt:3:13",
            "  |",
            "3 | v(x) :- r(x)",
            "  |             ^",
        ]),
    );
    // Recovery resumed at the declaration that starts line 4.
    let parsed = parse("relation r(x: int).\nv(x) :- r(x)\nview u(x: int).\nu(x) :- r(x).\n");
    assert_eq!(parsed.program.declarations.len(), 2);
    assert_eq!(parsed.program.rules.len(), 1);
    check(
        "relation r(x: int)",
        &lines(&[
            "error: expected `.` at the end of the declaration, found end of input",
            " --> test.rnt:1:19",
            "  |",
            "1 | relation r(x: int)",
            "  |                   ^",
        ]),
    );
}

#[test]
fn misplaced_expressions_and_wildcards() {
    check(
        "v(x) :- r(x + 1).\nv(x) :- r(x), x = _ + 1.\nv(x) :- r(x), x.\n",
        &lines(&[
            "error: expected `,` or `)`, found `+`",
            " --> test.rnt:1:13",
            "  |",
            "1 | v(x) :- r(x + 1).",
            "  |             ^",
            "  = help: atom arguments are variables, constants or `_`; compute values with an assignment such as `y = x + 1`",
            "",
            "error: `_` cannot be used in an expression",
            " --> test.rnt:2:19",
            "  |",
            "2 | v(x) :- r(x), x = _ + 1.",
            "  |                   ^",
            "  = help: a wildcard stands only for an atom argument",
            "",
            "error: expected a comparison operator (=, !=, <, <=, >, >=), found `.`",
            " --> test.rnt:3:16",
            "  |",
            "3 | v(x) :- r(x), x.",
            "  |                ^",
            "  = help: a body literal is an atom `r(...)`, a negated atom `not r(...)`, `optional r(...)`, a comparison such as `x > 3` or `x is null`, or a condition such as `(x > 3 or y is null)`",
        ]),
    );
}

#[test]
fn bad_aggregates() {
    check(
        "v(x, foo(y)) :- r(x).\nv(count(x, y)) :- r(x).\nv(sum()) :- r(x).\nv(max(1)) :- r(x).\n",
        &lines(&[
            "error: unknown aggregate `foo`",
            " --> test.rnt:1:6",
            "  |",
            "1 | v(x, foo(y)) :- r(x).",
            "  |      ^^^",
            "  = help: the aggregates are count(), sum(x), min(x), max(x), avg(x), count_distinct(x) and concat(x, \"sep\")",
            "",
            "error: `count` takes no argument or one variable, found `,`",
            " --> test.rnt:2:10",
            "  |",
            "2 | v(count(x, y)) :- r(x).",
            "  |          ^",
            "",
            "error: `sum` takes a variable, as in `sum(x)`, found `)`",
            " --> test.rnt:3:7",
            "  |",
            "3 | v(sum()) :- r(x).",
            "  |       ^",
            "",
            "error: `max` takes a variable, as in `max(x)`, found `1`",
            " --> test.rnt:4:7",
            "  |",
            "4 | v(max(1)) :- r(x).",
            "  |       ^",
        ]),
    );
}

/// `concat` takes a variable and a string literal, nothing else: no separator, a variable or
/// an int as the separator, a third argument, a constant to join.
#[test]
fn bad_concat() {
    check(
        "v(concat(x)) :- r(x).\nv(concat(x, y)) :- r(x, y).\nv(concat(x, 1)) :- r(x).\n\
         v(concat(x, \",\", \";\")) :- r(x).\nv(concat(\"a\", \",\")) :- r(x).\n",
        &lines(&[
            "error: `concat` takes a separator string literal, as in `concat(x, \", \")`, found `)`",
            " --> test.rnt:1:11",
            "  |",
            "1 | v(concat(x)) :- r(x).",
            "  |           ^",
            "",
            "error: `concat` takes a separator string literal, as in `concat(x, \", \")`, found `y`",
            " --> test.rnt:2:13",
            "  |",
            "2 | v(concat(x, y)) :- r(x, y).",
            "  |             ^",
            "",
            "error: `concat` takes a separator string literal, as in `concat(x, \", \")`, found `1`",
            " --> test.rnt:3:13",
            "  |",
            "3 | v(concat(x, 1)) :- r(x).",
            "  |             ^",
            "",
            "error: `concat` takes a variable and a separator string, found `,`",
            " --> test.rnt:4:16",
            "  |",
            "4 | v(concat(x, \",\", \";\")) :- r(x).",
            "  |                ^",
            "",
            "error: `concat` takes a variable, as in `concat(x, \", \")`, found a string literal",
            " --> test.rnt:5:10",
            "  |",
            "5 | v(concat(\"a\", \",\")) :- r(x).",
            "  |          ^^^",
        ]),
    );
}

#[test]
fn declaration_errors() {
    check(
        "relation 5(x: int).\nview v(x int).\nview (x: int).\n",
        &lines(&[
            "error: expected a relation name, found `5`",
            " --> test.rnt:1:10",
            "  |",
            "1 | relation 5(x: int).",
            "  |          ^",
            "",
            "error: expected `:` and a type after the attribute name, found `int`",
            " --> test.rnt:2:10",
            "  |",
            "2 | view v(x int).",
            "  |          ^^^",
            "",
            "error: expected a relation name after `view`",
            " --> test.rnt:3:5",
            "  |",
            "3 | view (x: int).",
            "  |     ^",
        ]),
    );
}

#[test]
fn columns_count_characters_and_tabs_are_kept() {
    check(
        "v(x) :- r(x, \"héllo\"),\tx = 1.0e3.\n",
        &lines(&[
            "error: exponents are not written in decimal literals",
            " --> test.rnt:1:28",
            "  |",
            "1 | v(x) :- r(x, \"héllo\"),\tx = 1.0e3.",
            "  |                       \t    ^^^^^",
            "  = help: write the digits out (`1000.0`, not `1.0e3`): decimals are exact",
        ]),
    );
}

#[test]
fn every_syntax_error_is_reported_in_one_run() {
    let text = "relation r(x: int).\n\
                v(x) :- r(x), x > .\n\
                view v(x: int).\n\
                v(x) :- r(x) r(x).\n\
                v(x) :- r(x), x = 1.5e2.\n\
                v(x) :- r(x), x > 1.\n";
    let parsed = parse(text);
    let source = Source::new("test.rnt", text);
    let lines: Vec<usize> = parsed
        .diagnostics
        .iter()
        .map(|d| source.line_col(d.span.start).0)
        .collect();
    assert_eq!(
        lines,
        [2, 4, 5],
        "{}",
        render_all(&parsed.diagnostics, &source)
    );
    // The items without errors still parsed.
    assert_eq!(parsed.program.declarations.len(), 2);
    assert_eq!(parsed.program.rules.len(), 1);
    // `compile` reports the syntax errors and nothing else.
    assert_eq!(compile(text).unwrap_err(), parsed.diagnostics);
}

#[test]
fn nesting_is_limited_instead_of_overflowing_the_stack() {
    let deep = format!(
        "v(x) :- r(x), x = {}1{}.",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let errors = syntax_errors(&deep);
    assert!(
        errors.starts_with("error: expression nests too deeply\n"),
        "{errors}"
    );
    let negations = format!("v(x) :- r(x), x = {}x.", "-".repeat(100_000));
    assert!(syntax_errors(&negations).starts_with("error: expression nests too deeply\n"));
    let chain = format!("v(x) :- r(x), x = 1{}.", " + 1".repeat(100_000));
    assert!(syntax_errors(&chain).starts_with("error: expression nests too deeply\n"));
    // Up to the limit is fine.
    let ok = format!("v(x) :- r(x), x = 1{}.", " + 1".repeat(EXPR_DEPTH_MAX - 1));
    assert_eq!(syntax_errors(&ok), "");
    let ok = format!(
        "v(x) :- r(x), x = {}1{}.",
        "(".repeat(EXPR_DEPTH_MAX),
        ")".repeat(EXPR_DEPTH_MAX)
    );
    assert_eq!(syntax_errors(&ok), "");
}

#[test]
fn rules_and_declarations_are_limited_in_size() {
    let literals = vec!["r(x)"; BODY_LITERALS_MAX + 1].join(", ");
    let errors = syntax_errors(&format!("v(x) :- {literals}."));
    assert!(
        errors.starts_with("error: too many body literals\n"),
        "{errors}"
    );
    let terms = vec!["x"; TERMS_MAX + 1].join(", ");
    let errors = syntax_errors(&format!("v(x) :- r({terms})."));
    assert!(errors.starts_with("error: too many terms\n"), "{errors}");
    let attributes: Vec<String> = (0..=TERMS_MAX).map(|i| format!("a{i}: int")).collect();
    let errors = syntax_errors(&format!("relation r({}).", attributes.join(", ")));
    assert!(
        errors.starts_with("error: too many attributes\n"),
        "{errors}"
    );
    // At the limits, all is well.
    let literals = vec!["r(x)"; BODY_LITERALS_MAX - 1].join(", ");
    let terms = vec!["x"; TERMS_MAX].join(", ");
    let errors = syntax_errors(&format!("v(x) :- {literals}, r({terms})."));
    assert!(errors.is_empty(), "{}", &errors[..errors.len().min(200)]);
}

/// Fragments that make random texts look like programs, so the fuzzing reaches deep into
/// the parser and the checker.
const FRAGMENTS: &[&str] = &[
    "relation",
    "view",
    "ephemeral",
    "denial",
    "r",
    "s",
    "v",
    "x",
    "y",
    "_",
    "not",
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "int",
    "str",
    "bool",
    "true",
    "false",
    "(",
    ")",
    ",",
    ".",
    ":",
    ":-",
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "1",
    "-9",
    "\"s\"",
    "\"\\u",
    "#",
    "\n",
    " ",
    "é",
    "'",
    "\"",
    "99999999999999999999",
];

fn parse_check_render(text: &str) {
    let parsed = parse(text);
    let source = Source::new("fuzz.rnt", text);
    let _ = render_all(&parsed.diagnostics, &source);
    let _ = rnt_lang::canonical::canonical_text(&parsed.program);
    if let Err(diagnostics) = rnt_lang::check::check(parsed.program) {
        let _ = render_all(&diagnostics, &source);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        parse_check_render(&text);
    }

    #[test]
    fn random_token_soup_never_panics(
        pieces in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60)
    ) {
        parse_check_render(&pieces.join(" "));
        parse_check_render(&pieces.concat());
    }
}
